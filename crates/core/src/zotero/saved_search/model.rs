//! A saved search as the API lists it (`GET /searches`): a name and Zotero's conditions, read leniently.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// A saved search: its key, version, name and conditions, in the order Zotero keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SavedSearch {
    pub key: String,
    pub version: u64,
    pub name: String,
    pub conditions: Vec<SearchCondition>,
}

/// One condition as Zotero stores it: `title` `contains` `neural`, or a flag such as `noChildren` `true`. A
/// mode travels in `condition` after a slash (`fulltextContent/regexp`), as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchCondition {
    pub condition: String,
    pub operator: String,
    pub value: String,
}

impl SearchCondition {
    pub fn new(condition: &str, operator: &str, value: &str) -> Self {
        Self { condition: condition.to_owned(), operator: operator.to_owned(), value: value.to_owned() }
    }

    /// The condition's name without its mode, and the mode (`fulltextContent/regexp` → `fulltextContent`,
    /// `regexp`).
    pub fn name_and_mode(&self) -> (&str, Option<&str>) {
        match self.condition.split_once('/') {
            Some((name, mode)) => (name, Some(mode)),
            None => (&self.condition, None),
        }
    }
}

/// `title contains "neural"`, or `noChildren true` for a flag (no value).
impl fmt::Display for SearchCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.condition, self.operator)?;
        if !self.value.is_empty() {
            write!(f, " {:?}", self.value)?;
        }
        Ok(())
    }
}

/// `"Name": condition; condition; …`
impl fmt::Display for SavedSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}:", self.name)?;
        for (i, condition) in self.conditions.iter().enumerate() {
            write!(f, "{} {condition}", if i == 0 { "" } else { ";" })?;
        }
        Ok(())
    }
}

/// Text of a JSON value as Zotero would have stored it: strings as they are, numbers and booleans written out,
/// nothing for null or a missing value.
fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn version_of(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

impl SavedSearch {
    /// A search from the API's JSON: the whole object (`{key, version, data: {…}}`) or its `data`. Missing
    /// names and conditions read as empty, odd values as text; `None` only when there is no key at all.
    pub fn from_api(json: &Value) -> Option<Self> {
        let data = json.get("data").filter(|d| d.is_object()).unwrap_or(json);
        let key = json.get("key").or_else(|| data.get("key")).and_then(Value::as_str)?.to_owned();
        let version = version_of(json.get("version").or_else(|| data.get("version")));
        let conditions = data
            .get("conditions")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter(|c| c.is_object())
                    .map(|c| SearchCondition {
                        condition: text_of(c.get("condition")),
                        operator: text_of(c.get("operator")),
                        value: text_of(c.get("value")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Self { key, version, name: text_of(data.get("name")), conditions })
    }
}

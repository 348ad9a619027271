//! Turning a tool's JSON arguments into its typed input, with errors that name the argument and the rule.
//!
//! The published input schema (`schemas.json`, generated from the types and their `#[validate(...)]` bounds) is
//! also what the arguments are checked against: what clients are shown is what is enforced. serde checks types,
//! enums and keys; the schema's bounds (lengths, counts, ranges, patterns) are checked here once serde has read
//! the arguments. A rule a schema cannot say (one field or another) is checked by its tool.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::ToolError;

/// The pattern of a Zotero key in the published schemas. Keys are the one pattern serde itself enforces (their
/// deserializer parses them, trimmed), so it is the one [`misfit`] looks at.
pub const KEY_PATTERN: &str = "^[A-Z0-9]{8}$";

/// Parses and validates arguments. Absent arguments are an empty object, so tools whose arguments are all
/// optional can be called bare. `schema` is the tool's published input schema: its bounds are enforced, and when
/// the arguments do not parse it says which argument is wrong. (Without one, nothing beyond serde is checked.)
pub fn parse_arguments<T: DeserializeOwned>(arguments: Value, schema: Option<&Value>) -> Result<T, ToolError> {
    // Only the deserializing is generic: the rest is written once, not once per tool (about 1 KB of wasm each).
    let arguments = as_object(arguments)?;
    let input = T::deserialize(&arguments).map_err(|e| not_parsed(&arguments, schema, &e.to_string()))?;
    check_bounds(&arguments, schema)?;
    Ok(input)
}

/// The arguments as an object: absent ones are an empty object, and an argument given as `null` is absent.
/// Clients send `null` for an argument left empty (form-filling clients, models copying a schema's shape), and
/// the published schemas show an optional argument as a plain optional property (`mcp::schema::lean_input`), so
/// `null` must mean what leaving it out means, whatever the argument's type (one with a default takes it).
fn as_object(arguments: Value) -> Result<Value, ToolError> {
    match arguments {
        Value::Null => Ok(Value::Object(Default::default())),
        Value::Object(mut object) => {
            object.retain(|_, value| !value.is_null());
            Ok(Value::Object(object))
        }
        _ => Err(ToolError::invalid("the arguments must be a JSON object")),
    }
}

/// serde's complaint, with where the problem is when the schema can tell.
fn not_parsed(arguments: &Value, schema: Option<&Value>, error: &str) -> ToolError {
    // serde names missing and unknown fields itself; for the rest, say where the problem is.
    let inner = error.split(" at line ").next().unwrap_or(error).to_owned();
    match schema.and_then(|schema| misfit(arguments, schema, "")) {
        Some(path) if !path.is_empty() => ToolError::invalid(format!("`{path}`: {inner}")),
        _ => ToolError::invalid(inner),
    }
}

/// The schema's bounds (lengths, counts, ranges, patterns), every broken one named.
fn check_bounds(arguments: &Value, schema: Option<&Value>) -> Result<(), ToolError> {
    if let Some(schema) = schema {
        let mut problems = Vec::new();
        broken_bounds(arguments, schema, "", &mut problems);
        if !problems.is_empty() {
            zotero_mcp_core::sort::sort(&mut problems);
            return Err(ToolError::invalid(problems.join("; ")));
        }
    }
    Ok(())
}

/// The path (`items[0].creators[1].creatorType`) of the first value that does not fit its schema in the ways
/// that stop serde (type, enum, sign, key pattern, unknown property), or `None` when everything fits.
///
/// serde's own error says what is wrong but not where; tracking the path while deserializing (serde_path_to_error)
/// costs a second copy of every argument type's deserializer in the Worker, about 130 KB of wasm. Rules the
/// `validator` bounds check afterwards (lengths, ranges) are left out on purpose: they do not stop serde, so a
/// value breaking one of them is not what serde stopped at. Values are visited in the order serde reads them.
fn misfit(value: &Value, schema: &Value, path: &str) -> Option<String> {
    let Some(schema) = schema.as_object() else {
        return None; // `true`: anything fits.
    };
    if !fits_alone(value, schema) {
        return Some(path.to_owned());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            if !options.iter().any(|option| misfit(value, option, path).is_none()) {
                return Some(path.to_owned());
            }
        }
    }
    match value {
        Value::Object(object) => misfit_in_object(object, schema, path),
        Value::Array(items) => {
            let item_schema = schema.get("items")?;
            items.iter().enumerate().find_map(|(index, item)| misfit(item, item_schema, &format!("{path}[{index}]")))
        }
        _ => None,
    }
}

fn misfit_in_object(object: &Map<String, Value>, schema: &Map<String, Value>, path: &str) -> Option<String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, value) in object {
        let inner = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
        match (properties.and_then(|p| p.get(name)), schema.get("additionalProperties")) {
            (Some(property), _) | (None, Some(property @ Value::Object(_))) => {
                if let Some(found) = misfit(value, property, &inner) {
                    return Some(found);
                }
            }
            (None, Some(Value::Bool(false))) => return Some(inner),
            (None, _) => {}
        }
    }
    None
}

/// The checks on one value that need no recursion.
fn fits_alone(value: &Value, schema: &Map<String, Value>) -> bool {
    let type_fits = match schema.get("type") {
        Some(Value::String(name)) => has_type(value, name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).any(|name| has_type(value, name)),
        _ => true,
    };
    let enum_fits = schema.get("enum").and_then(Value::as_array).is_none_or(|options| options.contains(value));
    let const_fits = schema.get("const").is_none_or(|constant| constant == value);
    // Unsigned integers are published with `minimum: 0`; a negative one stops serde.
    let sign_fits = match (schema.get("minimum").and_then(Value::as_f64), value.as_f64()) {
        (Some(minimum), Some(number)) => minimum < 0.0 || number >= 0.0,
        _ => true,
    };
    // A key is read trimmed. Other patterns do not stop serde: they are bounds (`broken_bounds`).
    let pattern_fits = match (schema.get("pattern").and_then(Value::as_str), value.as_str()) {
        (Some(KEY_PATTERN), Some(text)) => zotero_mcp_core::zotero::ObjectKey::parse(text.trim()).is_ok(),
        _ => true,
    };
    type_fits && enum_fits && const_fits && sign_fits && pattern_fits
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        // serde reads `5.0` as a float, which no integer field takes.
        "integer" => value.is_i64() || value.is_u64(),
        _ => true,
    }
}

/// Collects one sentence per broken bound, e.g. "`limit` must be between 1 and 100 (got 500)", for every value
/// in `value` (which serde has read, so its types fit). Absent values are not checked: their defaults fit.
fn broken_bounds(value: &Value, schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else { return };
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    let say = |rule: String| format!("`{path}` {rule}");
    match value {
        Value::String(text) => {
            let count = text.chars().count() as f64;
            if let Some(rule) = span_rule(count, number("minLength"), number("maxLength"), CHARACTERS) {
                problems.push(say(format!("{rule} (got {})", counted(count, CHARACTERS))));
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str).filter(|p| *p != KEY_PATTERN) {
                if regex_lite::Regex::new(pattern).is_ok_and(|re| !re.is_match(text)) {
                    problems.push(say(format!("must match the pattern {pattern} (got {})", Value::String(clip(text)))));
                }
            }
        }
        Value::Number(n) => {
            let got = n.as_f64().unwrap_or_default();
            if let Some(rule) = span_rule(got, number("minimum"), number("maximum"), ("", "")) {
                problems.push(say(format!("{rule} (got {n})")));
            }
        }
        Value::Array(items) => {
            let count = items.len() as f64;
            if let Some(rule) = span_rule(count, number("minItems"), number("maxItems"), ENTRIES) {
                problems.push(say(format!("{rule} (got {})", counted(count, ENTRIES))));
            }
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    broken_bounds(item, item_schema, &format!("{path}[{index}]"), problems);
                }
            }
        }
        Value::Object(object) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for (name, inner) in object {
                let inner_path = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                let property = properties.and_then(|p| p.get(name)).or(schema.get("additionalProperties"));
                if let Some(property) = property {
                    broken_bounds(inner, property, &inner_path, problems);
                }
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
    // `Option<T>` and enums publish their alternatives: the bounds are those of the one the value is.
    for key in ["anyOf", "oneOf"] {
        if let Some(option) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|options| options.iter().find(|option| misfit(value, option, path).is_none()))
        {
            broken_bounds(value, option, path, problems);
        }
    }
}

const CHARACTERS: (&str, &str) = ("character", "characters");
const ENTRIES: (&str, &str) = ("entry", "entries");

/// "must be between 1 and 100", "must have at most 200 characters", or `None` when `got` is within the bounds.
/// `unit` is (singular, plural), empty for plain numbers.
fn span_rule(got: f64, min: Option<f64>, max: Option<f64>, unit: (&str, &str)) -> Option<String> {
    if !min.is_some_and(|m| got < m) && !max.is_some_and(|m| got > m) {
        return None;
    }
    let verb = if unit.0.is_empty() { "be" } else { "have" };
    Some(match (min, max) {
        (Some(min), Some(max)) => format!("must {verb} between {} and {}", number(min), counted(max, unit)),
        (Some(min), None) => format!("must {verb} at least {}", counted(min, unit)),
        (None, max) => format!("must {verb} at most {}", counted(max.unwrap_or_default(), unit)),
    })
}

/// `3 entries`, `1 character`, or the bare number when there is no unit.
fn counted(count: f64, (singular, plural): (&str, &str)) -> String {
    match (singular.is_empty(), count == 1.0) {
        (true, _) => number(count),
        (false, true) => format!("1 {singular}"),
        (false, false) => format!("{} {plural}", number(count)),
    }
}

/// A bound as written in the schema: `100`, not `100.0`.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// A value echoed in a message, cut short: it may be anything a model sent.
fn clip(text: &str) -> String {
    let mut shown: String = text.chars().take(40).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Input {
        item_key: Option<String>,
        limit: Option<u32>,
        mode: Option<Mode>,
        items: Option<Vec<Entry>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Entry {
        title: String,
        pages: Option<u32>,
    }

    /// The input schema as the published file has it for the types above.
    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "itemKey": { "type": ["string", "null"], "pattern": "^[A-Z0-9]{8}$" },
                "limit": { "type": ["integer", "null"], "minimum": 1, "maximum": 100 },
                "mode": { "oneOf": [{ "const": "fast" }, { "const": "slow" }, { "type": "null" }] },
                "items": {
                    "type": ["array", "null"],
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "properties": {
                            "title": { "type": "string", "minLength": 1 },
                            "pages": { "type": ["integer", "null"], "minimum": 0 }
                        },
                        "required": ["title"]
                    }
                }
            }
        })
    }

    fn problem(arguments: Value) -> String {
        match parse_arguments::<Input>(arguments, Some(&schema())) {
            Err(ToolError::InvalidArguments(problem)) => problem,
            other => panic!("expected an argument error, got {other:?}"),
        }
    }

    #[test]
    fn a_wrong_type_is_named() {
        let text = problem(json!({ "limit": "five" }));
        assert!(text.starts_with("`limit`: invalid type: string \"five\""), "{text}");
        assert!(problem(json!({ "limit": 2.5 })).starts_with("`limit`: "));
    }

    #[test]
    fn a_value_deep_in_a_list_is_named_by_its_path() {
        let text = problem(json!({ "items": [{ "title": "a" }, { "title": "b", "pages": -3 }] }));
        assert!(text.starts_with("`items[1].pages`: invalid value: integer `-3`"), "{text}");
        let text = problem(json!({ "items": [{ "title": "a", "page": 3 }] }));
        assert!(text.contains("unknown field `page`"), "{text}");
    }

    #[test]
    fn an_unknown_variant_is_named() {
        let text = problem(json!({ "mode": "medium" }));
        assert!(text.starts_with("`mode`: unknown variant `medium`"), "{text}");
    }

    #[test]
    fn the_first_value_serde_stops_at_is_named_not_one_validator_checks_later() {
        // `limit: 500` breaks only a validator bound; serde stops at `mode`.
        let text = problem(json!({ "limit": 500, "mode": "medium" }));
        assert!(text.starts_with("`mode`: "), "{text}");
        // Bounds are still reported once the types fit.
        assert!(problem(json!({ "limit": 500 })).contains("`limit` must be between 1 and 100 (got 500)"));
        assert!(problem(json!({ "items": [{ "title": "" }] })).contains("`items[0].title`"));
    }

    #[test]
    fn missing_and_unknown_fields_are_named_by_serde() {
        assert!(problem(json!({ "items": [{}] })).contains("missing field `title`"));
        assert!(problem(json!({ "colour": 1 })).contains("unknown field `colour`"));
    }

    #[test]
    fn without_a_schema_the_message_is_serde_s_alone() {
        match parse_arguments::<Input>(json!({ "limit": "x" }), None) {
            Err(ToolError::InvalidArguments(problem)) => {
                assert!(problem.starts_with("invalid type"), "{problem}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn counts_and_patterns_are_bounds_reported_with_what_was_sent() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tags": { "type": "array", "maxItems": 2, "items": { "type": "string", "maxLength": 3 } },
                "color": { "type": "string", "pattern": "^#[0-9a-f]{6}$" },
                "ratio": { "type": "number", "minimum": 0.5 }
            }
        });
        let broken = |value: Value| {
            let mut problems = Vec::new();
            broken_bounds(&value, &schema, "", &mut problems);
            problems
        };
        assert_eq!(broken(json!({ "tags": ["a", "b", "c"] })), ["`tags` must have at most 2 entries (got 3 entries)"]);
        assert_eq!(
            broken(json!({ "tags": ["abcd"] })),
            ["`tags[0]` must have at most 3 characters (got 4 characters)"]
        );
        assert_eq!(
            broken(json!({ "color": "yellow" })),
            ["`color` must match the pattern ^#[0-9a-f]{6}$ (got \"yellow\")"]
        );
        assert_eq!(broken(json!({ "ratio": 0.25 })), ["`ratio` must be at least 0.5 (got 0.25)"]);
        assert!(broken(json!({ "tags": ["ab"], "color": "#00ff00", "ratio": 1 })).is_empty());
    }

    #[test]
    fn a_key_is_checked_trimmed_as_it_is_read() {
        assert_eq!(misfit(&json!({ "itemKey": " ABCD2345 " }), &schema(), ""), None);
        assert_eq!(misfit(&json!({ "itemKey": "abcd" }), &schema(), ""), Some("itemKey".into()));
    }
}

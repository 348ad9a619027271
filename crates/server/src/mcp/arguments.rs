//! Turning a tool's JSON arguments into its typed input, with errors that name the argument and the rule.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use validator::{Validate, ValidationError, ValidationErrors, ValidationErrorsKind};

use super::error::ToolError;

/// Parses and validates arguments. Absent arguments are an empty object, so tools whose arguments are all
/// optional can be called bare. `schema` (the tool's published input schema) is read only when the arguments do
/// not parse, to say which argument is wrong.
pub fn parse_arguments<T: DeserializeOwned + Validate>(
    tool: &str,
    arguments: Value,
    schema: Option<&Value>,
) -> Result<T, ToolError> {
    let arguments = match arguments {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    let fail = |problem: String| ToolError::InvalidArguments { tool: tool.to_owned(), problem };
    if !arguments.is_object() {
        return Err(fail("the arguments must be a JSON object".into()));
    }
    let input = T::deserialize(&arguments).map_err(|e| {
        let inner = e.to_string();
        // serde names missing and unknown fields itself; for the rest, say where the problem is.
        let inner = inner.split(" at line ").next().unwrap_or(&inner).to_owned();
        match schema.and_then(|schema| misfit(&arguments, schema, "")) {
            Some(path) if !path.is_empty() => fail(format!("`{path}`: {inner}")),
            _ => fail(inner),
        }
    })?;
    input.validate().map_err(|errors| fail(describe_validation(&errors)))?;
    Ok(input)
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
    // The only pattern published is a Zotero key's, which is read trimmed.
    let pattern_fits = match (schema.get("pattern").and_then(Value::as_str), value.as_str()) {
        (Some(pattern), Some(text)) => regex_lite::Regex::new(pattern).map_or(true, |re| re.is_match(text.trim())),
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

/// One sentence per broken rule, e.g. "`limit` must be at most 100 (got 500)".
fn describe_validation(errors: &ValidationErrors) -> String {
    let mut problems = Vec::new();
    collect(errors, "", &mut problems);
    problems.sort();
    problems.join("; ")
}

fn collect(errors: &ValidationErrors, prefix: &str, out: &mut Vec<String>) {
    for (field, kind) in errors.errors() {
        let path = if prefix.is_empty() { field.to_string() } else { format!("{prefix}.{field}") };
        match kind {
            ValidationErrorsKind::Field(list) => out.extend(list.iter().map(|e| describe_rule(&path, e))),
            ValidationErrorsKind::Struct(inner) => collect(inner, &path, out),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    collect(inner, &format!("{path}[{index}]"), out);
                }
            }
        }
    }
}

fn describe_rule(path: &str, error: &ValidationError) -> String {
    if let Some(message) = &error.message {
        return format!("`{path}` {message}");
    }
    let param = |name: &str| error.params.get(name).map(|v| v.to_string());
    let got = param("value").map(|v| format!(" (got {v})")).unwrap_or_default();
    let rule = match (error.code.as_ref(), param("min"), param("max")) {
        ("range", Some(min), Some(max)) => format!("must be between {min} and {max}"),
        ("range", Some(min), None) => format!("must be at least {min}"),
        ("range", None, Some(max)) => format!("must be at most {max}"),
        ("length", Some(min), Some(max)) => format!("must have between {min} and {max} characters or entries"),
        ("length", Some(min), None) => format!("must have at least {min} characters or entries"),
        ("length", None, Some(max)) => format!("must have at most {max} characters or entries"),
        (code, _, _) => format!("breaks the rule `{code}`"),
    };
    format!("`{path}` {rule}{got}")
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, Validate)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Input {
        item_key: Option<String>,
        #[validate(range(min = 1, max = 100))]
        limit: Option<u32>,
        mode: Option<Mode>,
        #[validate(nested)]
        items: Option<Vec<Entry>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize, Validate)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Entry {
        #[validate(length(min = 1))]
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
        match parse_arguments::<Input>("t", arguments, Some(&schema())) {
            Err(ToolError::InvalidArguments { problem, .. }) => problem,
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
        match parse_arguments::<Input>("t", json!({ "limit": "x" }), None) {
            Err(ToolError::InvalidArguments { problem, .. }) => {
                assert!(problem.starts_with("invalid type"), "{problem}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_key_is_checked_trimmed_as_it_is_read() {
        assert_eq!(misfit(&json!({ "itemKey": " ABCD2345 " }), &schema(), ""), None);
        assert_eq!(misfit(&json!({ "itemKey": "abcd" }), &schema(), ""), Some("itemKey".into()));
    }
}

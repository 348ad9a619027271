//! Turning a tool's JSON arguments into its typed input, with errors that name the argument and the rule.

use serde::de::DeserializeOwned;
use serde_json::Value;
use validator::{Validate, ValidationError, ValidationErrors, ValidationErrorsKind};

use super::error::ToolError;

/// Parses and validates arguments. Absent arguments are an empty object, so tools whose arguments are all
/// optional can be called bare.
pub fn parse_arguments<T: DeserializeOwned + Validate>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    let arguments = match arguments {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    let fail = |problem: String| ToolError::InvalidArguments { tool: tool.to_owned(), problem };
    if !arguments.is_object() {
        return Err(fail("the arguments must be a JSON object".into()));
    }
    let input: T = serde_path_to_error::deserialize(arguments).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde names missing and unknown fields itself; for the rest, say where the problem is.
        let inner = inner.split(" at line ").next().unwrap_or(&inner).to_owned();
        if path == "." {
            fail(inner)
        } else {
            fail(format!("`{path}`: {inner}"))
        }
    })?;
    input.validate().map_err(|errors| fail(describe_validation(&errors)))?;
    Ok(input)
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

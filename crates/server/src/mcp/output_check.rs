//! Test builds only (the `check-outputs` feature): every successful tool answer is checked against the output
//! schema clients are shown, and a mismatch stops the test that made it.
//!
//! Clients may validate `structuredContent` against `outputSchema` (the official TypeScript and Python clients
//! do), and a validating host shows the model an error where the server succeeded. Checking every answer of
//! every test, in the one place all of them pass, keeps a schema from promising what some mode, empty result or
//! error path does not deliver (`tests/tool_shapes.rs` calls each). The feature is on in this crate's and the CLI's tests only: it links
//! a JSON Schema validator, which the Worker does not carry.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

thread_local! {
    /// Compiled validators by tool name: compiling one costs more than checking an answer.
    static VALIDATORS: RefCell<HashMap<String, Rc<jsonschema::Validator>>> = RefCell::new(HashMap::new());
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

/// Stops checking on this thread: for benchmarks, which are built with the tests' features but must time the
/// server as it ships.
pub fn pause() {
    PAUSED.with(|paused| paused.set(true));
}

/// Why an answer does not match its tool's published output schema: the tool, the arguments and every path
/// that fails, in one message.
pub fn mismatch(tool: &str, arguments: &Value, structured: &str, schema: &Value) -> Option<String> {
    if PAUSED.with(Cell::get) {
        return None;
    }
    let instance: Value = match serde_json::from_slice(structured.as_bytes()) {
        Ok(value) => value,
        Err(error) => return Some(format!("{tool}: structuredContent is not JSON ({error})")),
    };
    let validator = VALIDATORS.with(|cache| {
        if let Some(found) = cache.borrow().get(tool) {
            return Ok(Rc::clone(found));
        }
        let compiled = Rc::new(jsonschema::draft202012::new(schema).map_err(|e| e.to_string())?);
        cache.borrow_mut().insert(tool.to_owned(), Rc::clone(&compiled));
        Ok::<_, String>(compiled)
    });
    let validator = match validator {
        Ok(validator) => validator,
        Err(error) => return Some(format!("{tool}: its published outputSchema does not compile ({error})")),
    };
    let failures: Vec<String> = validator
        .iter_errors(&instance)
        .map(|error| {
            let at = error.instance_path().to_string();
            format!("at `{}`: {error}", if at.is_empty() { "/" } else { at.as_str() })
        })
        .collect();
    if failures.is_empty() {
        return None;
    }
    Some(format!(
        "the answer of {tool} does not match its published outputSchema, so a validating client rejects it.\n\
         arguments: {arguments}\n{}\nanswer: {}",
        failures.join("\n"),
        excerpt(structured)
    ))
}

/// The start of a long answer, cut on a character boundary.
fn excerpt(text: &str) -> &str {
    const SHOWN: usize = 2_000;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

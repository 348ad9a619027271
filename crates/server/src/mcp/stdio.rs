//! MCP over stdio, without the I/O: one newline-delimited JSON-RPC message in, at most one out.
//!
//! The native binary reads lines from stdin and writes what this returns to stdout; everything between is
//! here, so the stdio server answers exactly as the HTTP endpoint does, minus what only HTTP has (headers,
//! Origin, status codes). Both eras work over the same pipe: a message whose `params._meta` names a protocol
//! version is a 2026-07-28 request (its envelope is checked as over HTTP); anything else is a 2025-era one
//! (`initialize`, then requests), answered statelessly.

use serde_json::Value;

use super::dispatch::{answer_message, dispatch, is_served, Era};
use super::jsonrpc::{
    code, error_message, holds_more_values_than, too_many_values, Incoming, RpcError, MAX_MESSAGE_VALUES,
};
use super::protocol::meta;
use super::registry::Registry;
use super::transport::{check_envelope, check_version};
use crate::call::Session;

/// Answers one line read from the client. `None` when nothing is to be written back (a blank line, a
/// notification, or a response to a request this server never sends).
pub async fn answer_line(line: &str, registry: &Registry, session: &Session) -> Option<String> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    if holds_more_values_than(line.as_bytes(), MAX_MESSAGE_VALUES) {
        return Some(error_message(&Value::Null, &too_many_values()).to_string());
    }
    let body: Value = match serde_json::from_slice(line.as_bytes()) {
        Ok(value) => value,
        Err(e) => {
            let error = RpcError::new(code::PARSE_ERROR, format!("Parse error: the line is not valid JSON ({e})"));
            return Some(error_message(&Value::Null, &error).to_string());
        }
    };
    if body.is_array() {
        let error = RpcError::new(
            code::INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one JSON-RPC message per line",
        );
        return Some(error_message(&Value::Null, &error).to_string());
    }
    let incoming = match Incoming::from_value(body) {
        Ok(message) => message,
        Err(rejected) => return Some(error_message(&rejected.1, &rejected.0).to_string()),
    };
    let (Some(id), Some(method)) = (incoming.id.clone(), incoming.method.clone()) else {
        return None;
    };
    let modern = incoming.meta().is_some_and(|m| m.contains_key(meta::PROTOCOL_VERSION));
    let era = if modern { Era::Modern } else { Era::Legacy };
    if modern {
        if let Err((_, error)) = check_envelope(&incoming).and_then(check_version) {
            return Some(error_message(&id, &error).to_string());
        }
    }
    if !is_served(era, &method) {
        return Some(error_message(&id, &RpcError::method_not_found(&method)).to_string());
    }
    Some(match dispatch(&method, incoming.params, registry, session).await {
        Ok((answer, cache)) => answer_message(era, &id, answer, cache),
        Err(error) => error_message(&id, &error).to_string(),
    })
}

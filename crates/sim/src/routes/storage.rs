//! The storage origin's HTTP side: what S3 answers for a signed download (`GET /<bucket>/<md5>?Expires&Signature`)
//! and for a POST Object upload (`POST /<bucket>/`, the form the API's upload authorization described), with
//! S3's status codes and XML error bodies.
//!
//! Before anything else it refuses a request that carries the Zotero API key (403): the key belongs to
//! api.zotero.org only, and a client that forwards it across the redirect is leaking it. Faults armed with
//! `fail_matching` apply here too (match on the path, e.g. `/zotero-storage/`); the `fail_next` queue is the
//! API's alone.

use base64::Engine as _;
use zotero_mcp_core::webdav::md5_hex;

use crate::query::parse_pairs;
use crate::reply::Reply;
use crate::state::State;
use crate::storage::{multipart, BUCKET_PATH};
use crate::{dates, Fault, RecordedRequest};

/// Answers one request to the storage origin.
pub fn handle(state: &mut State, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    state.storage.requests.push(RecordedRequest::of(&parts, &body));
    let mut drop_answer = false;
    let reply = match injected_fault(state, &parts.method, &path, &body) {
        Some(Injected::Answer(reply)) => reply,
        injected => match carried_key(&parts.headers, &query) {
            Some(place) => Reply::text(
                403,
                &format!(
                    "zotero-sim storage: refused, this request carries a Zotero API key ({place}). The storage \
                     origin is not api.zotero.org: follow the redirect, or post the upload, without the \
                     Zotero-API-Key header, the Authorization header and the key= parameter."
                ),
            ),
            None => {
                drop_answer = matches!(injected, Some(Injected::DropAnswer));
                let served = route(state, &parts.method, &path, &query, &parts.headers, &body);
                match injected {
                    Some(Injected::LoseAnswer(status)) => Reply::text(
                        status,
                        &format!("zotero-sim: injected fault (HTTP {status}, after the request was served)"),
                    ),
                    _ => served,
                }
            }
        },
    };
    let mut response = reply.into_http(&parts.method, "zotero-sim storage: could not build the response");
    if drop_answer {
        response.extensions_mut().insert(crate::AnswerDropped);
    }
    response
}

/// What an armed fault does to a storage request.
enum Injected {
    /// Answered with this instead of being served.
    Answer(Reply),
    /// Served (S3 keeps an uploaded object), then the answer is lost on the way back, as when the connection
    /// drops after the last byte went up.
    DropAnswer,
    /// Served, then answered with this status instead.
    LoseAnswer(u16),
}

/// Where the request carries an API key, if it does.
fn carried_key(headers: &http::HeaderMap, query: &str) -> Option<&'static str> {
    let has = |name: &str| headers.get(name).is_some_and(|v| !v.is_empty());
    if has("zotero-api-key") {
        Some("Zotero-API-Key header")
    } else if has("authorization") {
        Some("Authorization header")
    } else if parse_pairs(query).iter().any(|(k, _)| k == "key") {
        Some("key= query parameter")
    } else {
        None
    }
}

/// A fault armed with `fail_matching` for this request, and what it does.
fn injected_fault(state: &mut State, method: &http::Method, path: &str, body: &[u8]) -> Option<Injected> {
    let index = state.matched_faults.iter_mut().position(|(m, _, _)| m.selects(method, path, body))?;
    let entry = &mut state.matched_faults[index];
    entry.1 -= 1;
    let fault = entry.2.clone();
    if entry.1 == 0 {
        state.matched_faults.remove(index);
    }
    let status = match fault {
        Fault::TooManyRequests { .. } => 429,
        Fault::ServiceUnavailable { .. } => 503,
        Fault::Status { status } => status,
        // S3 has no Backoff header: the request is served as usual.
        Fault::Backoff { .. } => return None,
        Fault::DropAnswer => return Some(Injected::DropAnswer),
        Fault::LoseAnswer { status } => return Some(Injected::LoseAnswer(status)),
    };
    Some(Injected::Answer(Reply::text(status, &format!("zotero-sim: injected fault (HTTP {status})"))))
}

fn route(
    state: &mut State,
    method: &http::Method,
    path: &str,
    query: &str,
    headers: &http::HeaderMap,
    body: &[u8],
) -> Reply {
    let Some(rest) = path.strip_prefix(BUCKET_PATH) else {
        return s3_error(404, "NoSuchBucket", "The specified bucket does not exist");
    };
    match (method, rest.trim_start_matches('/')) {
        (&http::Method::POST, "") => upload(state, headers, body),
        (&http::Method::GET | &http::Method::HEAD, hash) if !hash.is_empty() => download(state, hash, query),
        _ => s3_error(405, "MethodNotAllowed", "The specified method is not allowed against this resource."),
    }
}

/// A signed download: the signature must be one the API issued, for this object, and still valid.
fn download(state: &State, hash: &str, query: &str) -> Reply {
    let pairs = parse_pairs(query);
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let (Some(signature), Some(expires)) = (param("Signature"), param("Expires")) else {
        return s3_error(
            403,
            "AccessDenied",
            "Query-string authentication requires the Signature and Expires parameters",
        );
    };
    let grant = match state.storage.downloads.get(signature) {
        Some(g) if g.hash == hash && g.expires_at.to_string() == expires => g,
        _ => {
            return s3_error(
                403,
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.",
            )
        }
    };
    if dates::unix_now() >= grant.expires_at {
        return s3_error(403, "AccessDenied", "Request has expired");
    }
    let Some(bytes) = state.storage.objects.get(hash) else {
        return s3_error(404, "NoSuchKey", "The specified key does not exist.");
    };
    Reply::new(200)
        .header("Content-Type", grant.content_type.clone())
        .header("ETag", format!("\"{hash}\""))
        .body(bytes.clone())
}

/// A POST Object upload under a policy the API signed: the file must be the size and MD5 it was authorized for.
fn upload(state: &mut State, headers: &http::HeaderMap, body: &[u8]) -> Reply {
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    let Some(boundary) = multipart::boundary(content_type) else {
        return s3_error(412, "PreconditionFailed", "Bucket POST must be of the enclosure-type multipart/form-data");
    };
    let parts = match multipart::parse(body, &boundary) {
        Ok(p) => p,
        Err(why) => {
            return s3_error(
                400,
                "MalformedPOSTRequest",
                &format!("The body of your POST request is not well-formed multipart/form-data ({why})."),
            )
        }
    };
    let field = |name: &str| {
        parts.iter().find(|p| p.name.eq_ignore_ascii_case(name)).map(|p| String::from_utf8_lossy(&p.data).into_owned())
    };
    let Some(policy_id) = field("policy") else {
        return s3_error(400, "InvalidArgument", "Bucket POST must contain a field named 'policy'.");
    };
    let Some(policy) = state.storage.policies.get(&policy_id).cloned() else {
        return s3_error(403, "AccessDenied", "Invalid according to Policy: Policy Signature does not match");
    };
    if dates::unix_now() >= policy.expires_at {
        return s3_error(403, "AccessDenied", "Invalid according to Policy: Policy expired.");
    }
    let condition_failed = |what: &str, value: &str| {
        s3_error(
            403,
            "AccessDenied",
            &format!("Invalid according to Policy: Policy Condition failed: [\"eq\", \"${what}\", \"{value}\"]"),
        )
    };
    if field("key").as_deref() != Some(policy.hash.as_str()) {
        return condition_failed("key", &policy.hash);
    }
    let content_md5 = base64::engine::general_purpose::STANDARD.encode(hex_bytes(&policy.hash));
    if field("Content-MD5").as_deref() != Some(content_md5.as_str()) {
        return condition_failed("Content-MD5", &content_md5);
    }
    // S3 takes the file from the part named `file`, which must come last.
    let Some(file) = parts.last().filter(|p| p.name == "file") else {
        return s3_error(
            400,
            "InvalidArgument",
            "POST requires exactly one file upload per request, as the last field.",
        );
    };
    let size = file.data.len() as u64;
    if size < policy.size {
        return s3_error(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size");
    }
    if size > policy.size {
        return s3_error(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size");
    }
    if md5_hex(&file.data) != policy.hash {
        return s3_error(400, "BadDigest", "The Content-MD5 you specified did not match what we received.");
    }
    state.storage.objects.insert(policy.hash.clone(), file.data.clone());
    let location = format!("{}{BUCKET_PATH}/{}", state.storage.origin, policy.hash);
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PostResponse><Location>{location}</Location><Bucket>zotero-storage</Bucket><Key>{}</Key><ETag>\"{}\"</ETag></PostResponse>",
        policy.hash, policy.hash
    );
    let reply = Reply::new(201).header("ETag", format!("\"{}\"", policy.hash)).header("Location", location);
    if field("success_action_status").as_deref() == Some("201") {
        reply.header("Content-Type", "application/xml").body(xml.into_bytes())
    } else {
        Reply { status: 204, ..reply }
    }
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2).filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()).collect()
}

fn s3_error(status: u16, code: &str, message: &str) -> Reply {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    );
    Reply::new(status).header("Content-Type", "application/xml").body(xml.into_bytes())
}

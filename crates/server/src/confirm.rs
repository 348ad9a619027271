//! Asking the person before a destructive write, through the protocol (MCP 2026-07-28's multi round-trip
//! requests): the tool call is answered with `resultType: "input_required"` and a one-field form (a summary of
//! exactly what will change, and a "go ahead" box); the client shows it and calls the tool again with the
//! person's answer in `inputResponses` and our `requestState` echoed back. The write runs only on an explicit yes.
//!
//! The `requestState` is a random handle to a record in `CACHE_KV` (`confirm:<user hash>:<route>:<handle>`), not
//! the state itself: the record binds the question to the user, to the route and library the call works on
//! (`users/<id>`, `groups/<id>`, `local/users/0`…: [`crate::context::RequestContext::route`]; a question asked
//! through the Web API is unknown to a `--local` server and the reverse), to the call (a digest of the tool and its
//! arguments) and to the summary shown (a digest of its text), it lives [`ANSWER_SECS`] seconds, and it is
//! taken in the attempt counters (one indivisible step, so two answers sent together cannot both pass) and
//! deleted before the write runs, so an answer works once. A forged handle finds no record; a replayed one finds
//! none either; an answer to another call, or to another user's question, is refused. When the library changed
//! between the question and the answer (the summary comes out different), the person is asked again.
//!
//! Who may be asked: 2026-07-28 clients that declare `elicitation` in their capabilities (`{}` or `form`), and
//! clients of either era that declare MCP Apps, which are asked through the review panel instead: the call's
//! answer is the question ([`Unconfirmed::Review`], in its `_meta` under [`REVIEW_META`]), and the panel answers it
//! by making the same call again with the same `inputResponses` and `requestState` a form's answer carries. The
//! record, its checks and its single use are the same. Other 2025-era (`initialize`) clients could only be asked
//! with a server-to-client request on a stream held open for the session, which a stateless server answering one
//! POST at a time does not have; they keep the tools' own dry runs. `CONFIRM_WRITES=0` turns asking off for
//! unattended jobs.
//!
//! A tool that asks declares it ([`crate::mcp::registry::Tool::needs_confirmation`]); the request context then
//! refuses it a writer until [`crate::context::RequestContext::confirm`] has passed, so a destructive tool
//! cannot write past the question by forgetting to ask it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zotero_mcp_core::platform::{CounterStep, Counters, CountersError, KvError, KvStore, KvWrite};

/// The key of our one request in `inputRequests` (and of its answer in `inputResponses`).
pub const REQUEST_KEY: &str = "confirm";
/// The form's one field: a box the person ticks to let the write run.
pub const FIELD: &str = "confirm";
/// How long an answer is accepted after the question was asked (Workers KV keeps nothing under 60 s).
pub const ANSWER_SECS: u64 = 600;
/// The longest `requestState` read; ours are [`HANDLE_LEN`] characters.
const HANDLE_LEN: usize = 32;
const KEY_PREFIX: &str = "confirm:";

/// What a 2026-07-28 `tools/call` said about asking: whether the client can show a form, and the answer it
/// brings back, if any. Read by the MCP layer from the request ([`Asking::from_params`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asking {
    /// The client declared `elicitation` (form mode) in `_meta`'s client capabilities.
    pub can_ask: bool,
    /// `params.inputResponses`, as sent.
    pub responses: Option<Value>,
    /// `params.requestState`, as sent.
    pub state: Option<String>,
    /// A digest of the tool's name and its arguments (keys in order), which an answer must match.
    pub call: String,
    /// Asked through the review panel of MCP Apps (`crate::mcp::apps`) rather than a form: the question goes
    /// out as the call's answer, for the panel to show, with the call it is about.
    pub in_panel: Option<PanelCall>,
}

/// The call a question in the review panel is about: the panel answers by making it again, unchanged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PanelCall {
    pub tool: String,
    pub arguments: Value,
}

/// Where a panel's answer travels in `params._meta` when a host passes on only the standard members of a
/// `tools/call` (`inputResponses` and `requestState` as the form's answer would carry them).
pub const ANSWER_META: &str = "io.github.zotero-mcp/answer";
/// The `_meta` key of a question asked through the review panel.
pub const REVIEW_META: &str = "io.github.zotero-mcp/review";
/// The text of a call whose question is in the review panel: for the model, which reads it as a failure, so that
/// it never takes the question for a change made.
pub const IN_REVIEW: &str = "Not done yet: the person is reviewing this change in the panel shown with this call, \
                             and nothing has changed. Do not call it again: they approve or decline it there, and \
                             the panel tells you which.";

impl Asking {
    /// Reads a `tools/call`'s params. `modern` is whether it came in the 2026-07-28 envelope: a 2025-era
    /// request is never asked with a form, whatever it claims.
    /// `in_panel`: the client declared MCP Apps, and is asked through the review panel in either era.
    pub fn from_params(params: &Value, capabilities_key: &str, modern: bool, in_panel: bool) -> Self {
        let by_form = modern
            && params
                .get("_meta")
                .and_then(|meta| meta.get(capabilities_key))
                .and_then(|caps| caps.get("elicitation"))
                .and_then(Value::as_object)
                // `{}` means form mode; a client that lists modes must list `form`.
                .is_some_and(|modes| modes.is_empty() || modes.contains_key("form"));
        if !by_form && !in_panel {
            // Nobody will be asked: no digest of the arguments (a file in base64 can be megabytes) on every call.
            return Self::default();
        }
        let mut call = Sha256::new();
        call.update(params.get("name").and_then(Value::as_str).unwrap_or_default().as_bytes());
        call.update(b"\n");
        feed_canonical(&mut call, params.get("arguments").unwrap_or(&Value::Null));
        let answer = params.get("_meta").and_then(|meta| meta.get(ANSWER_META));
        let member = |name: &str| params.get(name).or_else(|| answer.and_then(|a| a.get(name)));
        let in_panel = in_panel.then(|| PanelCall {
            tool: params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
            arguments: params.get("arguments").cloned().unwrap_or(Value::Null),
        });
        Self {
            can_ask: true,
            responses: member("inputResponses").cloned(),
            state: member("requestState").and_then(Value::as_str).map(str::to_owned),
            call: hex(&call.finalize()),
            in_panel,
        }
    }
}

/// A destructive write, described for the person asked to allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// What will change, exactly and briefly: counts, titles, which copy a merge keeps.
    pub summary: String,
    /// Whether this call is one to ask about (three files renamed are not; three hundred are).
    pub ask: bool,
    /// Every object the change touches, one line each, where the summary names the first [`NAMED`]: the review
    /// panel lists them all. Not part of what an answer is bound to (the summary says the same, counted).
    pub items: Vec<String>,
}

impl Proposal {
    pub fn new(summary: impl Into<String>) -> Self {
        Self { summary: summary.into(), ask: true, items: Vec::new() }
    }
    /// Every object of `listing`, for the review panel to list one by one.
    pub fn listing(mut self, listing: Listing) -> Self {
        self.items = listing.every;
        self
    }
    /// Asks only when `ask` holds; otherwise the write goes ahead as if confirmed.
    pub fn ask_if(mut self, ask: bool) -> Self {
        self.ask = ask;
        self
    }
}

/// A handful: renaming this many files, or changing this many items' tags, goes ahead without a question.
pub const HANDFUL: usize = 5;

/// How many objects a summary names one by one; the rest are counted.
pub const NAMED: usize = 10;

/// Lines of a summary as a list ([`listed`]): as the summary shows them, and every one of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The first [`NAMED`] lines as `- …`, then how many more.
    pub shown: String,
    /// Every line, for the review panel.
    pub every: Vec<String>,
}

impl std::fmt::Display for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// The objects a change touches, one line each (`- "Title" (KEY)`), the first [`NAMED`] of them, then how many
/// more: what a person needs to recognise the wrong paper before it is gone.
pub fn named<'a>(objects: impl IntoIterator<Item = (&'a str, String)>) -> Listing {
    listed(objects.into_iter().map(|(key, title)| format!("\u{201c}{title}\u{201d} ({key})")))
}

/// Lines of a summary as a list, the first [`NAMED`] of them, then how many more.
pub fn listed(lines: impl IntoIterator<Item = String>) -> Listing {
    let every: Vec<String> = lines.into_iter().collect();
    let mut shown: Vec<String> = every.iter().take(NAMED).map(|line| format!("- {line}")).collect();
    if every.len() > NAMED {
        shown.push(format!("- \u{2026} and {} more", every.len() - NAMED));
    }
    Listing { shown: shown.join("\n"), every }
}

/// Why a confirmed write may not go ahead (yet).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Unconfirmed {
    /// The person is to be asked: this is the `input_required` result to send.
    #[error("the person must confirm this change first")]
    Ask(Box<Value>),
    /// The person is to be asked in the review panel: this is the question, for the answer's `_meta`.
    #[error("{IN_REVIEW}")]
    Review(Box<Value>),
    /// The person said no (declined, cancelled, or left the box unticked).
    #[error(
        "Not done: the person declined `{tool}` when asked to confirm it. Nothing was changed. Do not try again \
         unless they ask you to."
    )]
    Declined { tool: String },
    /// The answer does not hold: forged, replayed, expired, or given for another call.
    #[error("Refused: {why}. Nothing was changed. Call `{tool}` again without inputResponses or requestState to be asked afresh.")]
    Refused { tool: String, why: String },
    /// The store of questions failed; nothing was written.
    #[error("The confirmation could not be checked ({0}). Nothing was changed; try again in a moment.")]
    Store(String),
}

impl From<KvError> for Unconfirmed {
    fn from(error: KvError) -> Self {
        Unconfirmed::Store(error.to_string())
    }
}

/// The question asked, as kept until it is answered.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Asked {
    call: String,
    summary: String,
    expires_ms: u64,
}

/// Where the questions are kept: `CACHE_KV`, the user named by a hash (the key is listed by nobody, but a
/// login name need not sit in it), then the route and library. Records of older versions (no route) are not
/// found: they lived ten minutes, and an answer to one is asked again.
pub struct Questions<'a> {
    pub kv: &'a dyn KvStore,
    /// Where an answer is taken once, indivisibly ([`Questions::decide`]).
    pub counters: &'a dyn Counters,
    pub user: &'a str,
    /// The call's route and library: `users/<id>`, `groups/<id>`, `local/users/0`, `local/groups/<id>`.
    pub route: &'a str,
    pub now_ms: u64,
}

impl Questions<'_> {
    fn key(&self, handle: &str) -> String {
        format!("{KEY_PREFIX}{}:{}:{handle}", &digest(self.user)[..16], self.route)
    }

    /// Decides whether `plan` may be written now: `Ok` on a yes given for this very call and summary, else the
    /// question to send (asked afresh when the summary changed or no answer came), the refusal or the "no".
    pub async fn decide(&self, tool: &str, asking: &Asking, plan: &Proposal) -> Result<(), Unconfirmed> {
        let Some(state) = asking.state.as_deref() else {
            return Err(self.ask(asking, plan, None).await?);
        };
        let refused = |why: &str| Unconfirmed::Refused { tool: tool.to_owned(), why: why.to_owned() };
        let unknown = "this confirmation is unknown, already used or expired (an answer is good once, for 10 \
                       minutes)";
        if state.len() != HANDLE_LEN || !state.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(refused(unknown));
        }
        let key = self.key(state);
        let asked: Asked = match self.kv.get(&key).await? {
            Some(text) => serde_json::from_slice(text.as_bytes()).map_err(|_| refused(unknown))?,
            None => return Err(refused(unknown)),
        };
        if asked.expires_ms <= self.now_ms {
            self.kv.delete(&key).await?;
            return Err(refused(unknown));
        }
        if !bool::from(asked.call.as_bytes().ct_eq(asking.call.as_bytes())) {
            return Err(refused("this confirmation was given for another call (another tool or other arguments)"));
        }
        // The question is used up whatever comes next. Reading the record and deleting it are two KV steps, and
        // two answers racing could both read it before either deletes it (Workers KV is eventually consistent
        // besides). The attempt counters take the handle in one indivisible step (the Durable Object on the
        // Worker, this process natively): the first answer gets it, any other is refused as used.
        let once = format!("confirm-once:{}", digest(&key));
        let take = [
            CounterStep::Below { key: once.clone(), limit: 1 },
            CounterStep::Add { key: once, window_secs: ANSWER_SECS + 60, rolling: false },
        ];
        match self.counters.update(&take).await {
            Ok(_) => {}
            Err(CountersError::Refused { .. }) => return Err(refused(unknown)),
            Err(CountersError::Unavailable(why)) => return Err(Unconfirmed::Store(why)),
        }
        self.kv.delete(&key).await?;
        if asked.summary != plan.summary {
            let changed = "The library changed since you were asked, so here is what would change now.";
            return Err(self.ask(asking, plan, Some(changed)).await?);
        }
        let answer = asking.responses.as_ref().and_then(|responses| responses.get(REQUEST_KEY));
        let Some(answer) = answer else {
            // No answer to our question: ask it again (the spec's advice), with a fresh handle.
            return Err(self.ask(asking, plan, None).await?);
        };
        let accepted = answer.get("action").and_then(Value::as_str) == Some("accept")
            && answer.get("content").and_then(|c| c.get(FIELD)).and_then(Value::as_bool) == Some(true);
        if accepted {
            Ok(())
        } else {
            Err(Unconfirmed::Declined { tool: tool.to_owned() })
        }
    }

    /// Keeps a new question and returns the `input_required` result asking it.
    async fn ask(&self, asking: &Asking, plan: &Proposal, preface: Option<&str>) -> Result<Unconfirmed, Unconfirmed> {
        let summary = plan.summary.as_str();
        let handle = new_handle()?;
        let asked = Asked {
            call: asking.call.clone(),
            summary: summary.to_owned(),
            expires_ms: self.now_ms + ANSWER_SECS * 1000,
        };
        let text = serde_json::to_string(&asked).map_err(|e| Unconfirmed::Store(e.to_string()))?;
        // KV keeps the record a little past its time; the time inside it is what counts.
        self.kv.put(&self.key(&handle), &text, KvWrite::ExpiresIn(ANSWER_SECS + 60)).await?;
        let message = match preface {
            Some(preface) => format!("{preface}\n\n{summary}"),
            None => summary.to_owned(),
        };
        if let Some(call) = &asking.in_panel {
            return Ok(Unconfirmed::Review(Box::new(json!({
                "tool": call.tool,
                "arguments": call.arguments,
                "summary": message,
                "items": plan.items,
                "requestState": handle,
                "expiresAt": zotero_mcp_core::calendar::iso_time(asked.expires_ms),
            }))));
        }
        Ok(Unconfirmed::Ask(Box::new(input_required(&message, &handle))))
    }
}

/// The `input_required` result: one form-mode elicitation with a single required box.
pub fn input_required(message: &str, handle: &str) -> Value {
    let mut properties = Map::new();
    properties.insert(
        FIELD.to_owned(),
        json!({
            "type": "boolean",
            "title": "Go ahead",
            "description": "Tick to make this change; leave it or decline to change nothing.",
            "default": false,
        }),
    );
    json!({
        "resultType": "input_required",
        "inputRequests": {
            REQUEST_KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": { "type": "object", "properties": properties, "required": [FIELD] },
                },
            },
        },
        "requestState": handle,
    })
}

/// A handle no one can guess: 32 letters and digits (190 bits) from the platform's CSPRNG.
fn new_handle() -> Result<String, Unconfirmed> {
    random_letters().map_err(|e| Unconfirmed::Store(format!("no random numbers: {e}")))
}

/// [`HANDLE_LEN`] random letters and digits: a question's handle, and the session id of a client that declared
/// MCP Apps (`crate::mcp::apps`).
pub fn random_letters() -> Result<String, getrandom::Error> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; HANDLE_LEN];
    getrandom::fill(&mut bytes)?;
    // 62 letters: a byte modulo 62 is slightly uneven (4 of 256 values), which costs a fraction of a bit each.
    Ok(bytes.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect())
}

fn digest(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes `value` as JSON with every object's keys sorted, so the same arguments in another order are the same
/// call; fed piece by piece, so a large argument is never copied into one string first.
fn feed_canonical(hasher: &mut Sha256, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            zotero_mcp_core::sort::sort(&mut keys);
            hasher.update(b"{");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    hasher.update(b",");
                }
                feed_canonical(hasher, &Value::String(key.clone()));
                hasher.update(b":");
                feed_canonical(hasher, &map[key.as_str()]);
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    hasher.update(b",");
                }
                feed_canonical(hasher, item);
            }
            hasher.update(b"]");
        }
        // A string is hashed as its JSON text (quoted, escaped), so `"a,b"` and two values never collide.
        Value::String(text) => hasher.update(Value::String(text.clone()).to_string().as_bytes()),
        other => hasher.update(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_arguments_in_another_order_are_the_same_call() {
        let caps = "io.modelcontextprotocol/clientCapabilities";
        let meta = json!({ caps: { "elicitation": {} } });
        let a =
            json!({ "name": "zotero_delete_items", "arguments": { "keys": ["A"], "permanent": true }, "_meta": meta });
        let b =
            json!({ "_meta": meta, "arguments": { "permanent": true, "keys": ["A"] }, "name": "zotero_delete_items" });
        let c =
            json!({ "name": "zotero_delete_items", "arguments": { "keys": ["B"], "permanent": true }, "_meta": meta });
        assert_eq!(Asking::from_params(&a, caps, true, false).call, Asking::from_params(&b, caps, true, false).call);
        assert_ne!(Asking::from_params(&a, caps, true, false).call, Asking::from_params(&c, caps, true, false).call);
    }

    #[test]
    fn a_client_declaring_mcp_apps_is_asked_in_the_panel_in_either_era_and_may_answer_in_meta() {
        let caps = "io.modelcontextprotocol/clientCapabilities";
        let answer = json!({ "confirm": { "action": "accept", "content": { "confirm": true } } });
        let params = json!({
            "name": "zotero_delete_items",
            "arguments": { "keys": ["A"] },
            "_meta": { ANSWER_META: { "requestState": "h", "inputResponses": answer } },
        });
        for modern in [false, true] {
            let asking = Asking::from_params(&params, caps, modern, true);
            assert!(asking.can_ask, "modern: {modern}");
            let call = asking.in_panel.as_ref().expect("asked in the panel");
            assert_eq!((call.tool.as_str(), &call.arguments), ("zotero_delete_items", &json!({ "keys": ["A"] })));
            assert_eq!((asking.state.as_deref(), asking.responses.as_ref()), (Some("h"), Some(&answer)));
        }
        // The members a form's answer carries come first when a host passes them on.
        let mut both = params.clone();
        both["requestState"] = json!("top");
        assert_eq!(Asking::from_params(&both, caps, false, true).state.as_deref(), Some("top"));
        // The same call digest as a form's question: the record is the same either way.
        let mut form = params.clone();
        form["_meta"] = json!({ caps: { "elicitation": {} } });
        assert_eq!(
            Asking::from_params(&form, caps, true, false).call,
            Asking::from_params(&params, caps, false, true).call
        );
        assert!(!Asking::from_params(&params, caps, false, false).can_ask, "without the extension, no asking");
    }

    #[test]
    fn only_a_modern_client_declaring_form_elicitation_is_asked() {
        let caps = "io.modelcontextprotocol/clientCapabilities";
        let with = |elicitation: Value| json!({ "name": "t", "_meta": { caps: { "elicitation": elicitation } } });
        assert!(Asking::from_params(&with(json!({})), caps, true, false).can_ask);
        assert!(Asking::from_params(&with(json!({ "form": {}, "url": {} })), caps, true, false).can_ask);
        assert!(!Asking::from_params(&with(json!({ "url": {} })), caps, true, false).can_ask);
        assert!(
            !Asking::from_params(&with(json!({})), caps, false, false).can_ask,
            "2025-era requests are never asked"
        );
        assert!(!Asking::from_params(&json!({ "name": "t", "_meta": { caps: {} } }), caps, true, false).can_ask);
    }

    #[test]
    fn the_question_is_a_valid_form() {
        let asked = input_required("Delete 2 items", "h");
        let request = &asked["inputRequests"][REQUEST_KEY];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["requestedSchema"]["properties"][FIELD]["type"], "boolean");
        assert_eq!(request["params"]["requestedSchema"]["required"], json!([FIELD]));
        assert_eq!(asked["requestState"], "h");
    }

    #[tokio::test]
    async fn a_question_asked_on_one_route_is_unknown_on_another() {
        let clock = zotero_mcp_core::testing::ManualClock::at(1_800_000_000_000);
        let kv = zotero_mcp_core::testing::MemoryKv::new(clock.clone());
        let counters = zotero_mcp_core::platform::MemoryCounters::new(clock);
        let asking = Asking { can_ask: true, responses: None, state: None, call: "call".into(), in_panel: None };
        let plan = Proposal::new("Delete 2 items");
        let on = |route| Questions {
            kv: kv.as_ref(),
            counters: counters.as_ref(),
            user: "owner",
            route,
            now_ms: 1_800_000_000_000,
        };
        let Err(Unconfirmed::Ask(question)) = on("users/1").decide("t", &asking, &plan).await else {
            panic!("asked first")
        };
        let yes = json!({ REQUEST_KEY: { "action": "accept", "content": { FIELD: true } } });
        let answer =
            Asking { state: question["requestState"].as_str().map(str::to_owned), responses: Some(yes), ..asking };
        for elsewhere in ["local/users/0", "groups/1", "users/2"] {
            let refused = on(elsewhere).decide("t", &answer, &plan).await;
            assert!(matches!(refused, Err(Unconfirmed::Refused { .. })), "{elsewhere}: {refused:?}");
        }
        assert_eq!(on("users/1").decide("t", &answer, &plan).await, Ok(()), "its own route takes the answer");
    }

    #[test]
    fn handles_are_long_and_differ() {
        let (a, b) = (new_handle().unwrap(), new_handle().unwrap());
        assert_eq!(a.len(), HANDLE_LEN);
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()));
    }
}

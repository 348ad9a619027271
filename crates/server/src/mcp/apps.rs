//! MCP Apps: panels a host draws beside a tool's answer (the extension `io.modelcontextprotocol/ui`).
//!
//! Offered only to a client that declares the extension. Everyone else gets exactly the answers the server gave
//! before panels existed: no `_meta.ui`, no `ui://` resources, no app-only tool, no session header.
//!
//! Knowing a client declared it takes no server state:
//! - a 2026-07-28 request carries its client's capabilities in its own `_meta`;
//! - a 2025-era client declares them once, in `initialize`. Its answer then carries an `Mcp-Session-Id` that
//!   says so (`apps-` and random letters), which that era's clients send back on every later request. The id
//!   is not a secret and grants nothing: a client that sends it unasked only sees the panels' declarations.
//!
//! Each panel is one HTML document assembled from `apps/panels/` when it is read (its CSS and the small
//! app-side bridge inlined), with the server's origin written in where it loads pdf.js from. The Worker reads
//! those files, and serves pdf.js (`/apps/pdfjs/…`), from its static assets, so neither costs its bundle
//! anything; the native server holds its own copy of both.

use serde_json::{json, Value};

use zotero_mcp_core::platform::{PanelFiles, PanelFilesError};

use super::protocol::meta;

/// The extension's name in a client's capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The media type of a panel's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// How a 2025-era client's session id starts when it declared the extension.
pub const SESSION_PREFIX: &str = "apps-";
/// The session header of the 2025 Streamable HTTP transport.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The longest session id read (ours are [`SESSION_PREFIX`] and 32 letters).
const MAX_SESSION_ID: usize = 64;
/// Where the static files of the panels are served.
pub const ASSET_PATH: &str = "/apps/";

/// A panel, and the tools that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    /// The page a passage comes from, with the passage highlighted.
    Evidence,
    /// A reference check's report.
    References,
    /// What a confirming write will change, with approve and decline.
    Review,
}

impl Panel {
    pub const ALL: [Panel; 3] = [Panel::Evidence, Panel::References, Panel::Review];

    pub const fn uri(self) -> &'static str {
        match self {
            Panel::Evidence => "ui://zotero/evidence",
            Panel::References => "ui://zotero/references",
            Panel::Review => "ui://zotero/review",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Panel::Evidence => "Evidence reader",
            Panel::References => "Reference check report",
            Panel::Review => "Review a change",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Panel::Evidence => "The PDF page a passage comes from, with the passage highlighted.",
            Panel::References => "Every checked reference with its outcome, the fields that disagree and the flags.",
            Panel::Review => "What a change will do, item by item, to approve or decline.",
        }
    }

    pub fn from_uri(uri: &str) -> Option<Panel> {
        Panel::ALL.into_iter().find(|p| p.uri() == uri)
    }

    /// The file names of the panel's document and its own script in `apps/panels/`.
    fn files(self) -> (&'static str, &'static str) {
        match self {
            Panel::Evidence => ("evidence.html", "evidence.js"),
            Panel::References => ("references.html", "references.js"),
            Panel::Review => ("review.html", "review.js"),
        }
    }

    /// Whether the panel loads files from this server (pdf.js), which its Content Security Policy must name.
    fn loads_assets(self) -> bool {
        self == Panel::Evidence
    }
}

/// The files every panel inlines: the stylesheet and the app side of the protocol.
const SHARED_CSS: &str = "shared.css";
const BRIDGE_JS: &str = "bridge.js";

/// The native server's copy of `apps/panels/` (the Worker reads its static assets instead, so that these never
/// reach its bundle: `Platform::panel_files`).
#[cfg(not(target_arch = "wasm32"))]
const OWN_FILES: &[(&str, &str)] = &[
    (SHARED_CSS, include_str!("../../../../apps/panels/shared.css")),
    (BRIDGE_JS, include_str!("../../../../apps/panels/bridge.js")),
    ("evidence.html", include_str!("../../../../apps/panels/evidence.html")),
    ("evidence.js", include_str!("../../../../apps/panels/evidence.js")),
    ("references.html", include_str!("../../../../apps/panels/references.html")),
    ("references.js", include_str!("../../../../apps/panels/references.js")),
    ("review.html", include_str!("../../../../apps/panels/review.html")),
    ("review.js", include_str!("../../../../apps/panels/review.js")),
];

/// Why a panel cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error(
        "The panels' files are not deployed with this Worker: add `[assets] directory = \"build/assets\"` and \
         `binding = \"ASSETS\"` to wrangler.toml (as the project's own does), then deploy again."
    )]
    NoFiles,
    #[error("The panel file apps/panels/{0} is missing from this deployment; build and deploy again.")]
    Missing(&'static str),
    #[error("The panel file apps/panels/{file} must hold {marker} exactly once.")]
    Marker { file: &'static str, marker: &'static str },
    #[error("{0}")]
    Store(#[from] PanelFilesError),
}

/// One of the panels' files, from the platform's store or the server's own copy.
async fn panel_file(store: Option<&dyn PanelFiles>, name: &'static str) -> Result<String, PanelError> {
    match store {
        Some(store) => store.read(name).await?.ok_or(PanelError::Missing(name)),
        None => own_file(name),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn own_file(name: &'static str) -> Result<String, PanelError> {
    OWN_FILES.iter().find(|(n, _)| *n == name).map(|(_, text)| (*text).to_owned()).ok_or(PanelError::Missing(name))
}

#[cfg(target_arch = "wasm32")]
fn own_file(_name: &'static str) -> Result<String, PanelError> {
    Err(PanelError::NoFiles)
}

/// A panel's whole document: its HTML with the shared stylesheet, the bridge and its own script inlined where
/// its markers stand, so a host loads it as one file.
async fn document(panel: Panel, store: Option<&dyn PanelFiles>) -> Result<String, PanelError> {
    let (html, js) = panel.files();
    let parts = [html, SHARED_CSS, BRIDGE_JS, js].map(|name| panel_file(store, name));
    let mut texts = zotero_mcp_core::join::join_all(parts).await.into_iter();
    let mut next = || texts.next().unwrap_or(Err(PanelError::Missing(html)));
    let mut document = next()?;
    for marker in ["/*SHARED_CSS*/", "/*BRIDGE_JS*/", "/*PANEL_JS*/"] {
        let text = next()?;
        if document.matches(marker).count() != 1 {
            return Err(PanelError::Marker { file: html, marker });
        }
        document = document.replacen(marker, &text, 1);
    }
    Ok(document)
}

/// Whether a client's capabilities declare the extension with the panels' media type.
pub fn declared_in(capabilities: Option<&Value>) -> bool {
    capabilities
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

/// Whether a 2026-07-28 request's envelope declares the extension.
pub fn declared_in_envelope(meta_object: Option<&serde_json::Map<String, Value>>) -> bool {
    declared_in(meta_object.and_then(|m| m.get(meta::CLIENT_CAPABILITIES)))
}

/// Whether a 2025-era request's session id is one handed to a client that declared the extension.
pub fn declared_by_session(session_id: Option<&str>) -> bool {
    session_id.is_some_and(|id| {
        id.len() <= MAX_SESSION_ID
            && id
                .strip_prefix(SESSION_PREFIX)
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
    })
}

/// A new session id for a 2025-era client that declared the extension; `None` without random numbers (the
/// client is then served as one without panels).
pub fn new_session_id() -> Option<String> {
    crate::confirm::random_letters().ok().map(|letters| format!("{SESSION_PREFIX}{letters}"))
}

/// `_meta` of a tool that shows `panel`, in the nested form and the flat key older hosts read.
pub fn tool_meta(panel: Panel) -> Value {
    json!({ "ui": { "resourceUri": panel.uri() }, "ui/resourceUri": panel.uri() })
}

/// `_meta` of a tool only panels call: hosts keep it from the model.
pub fn app_only_meta() -> Value {
    json!({ "ui": { "visibility": ["app"] } })
}

/// `resources/list`'s entries for the panels.
pub fn list_resources() -> Vec<Value> {
    Panel::ALL
        .into_iter()
        .map(|panel| {
            json!({
                "uri": panel.uri(),
                "name": panel.uri().trim_start_matches("ui://zotero/"),
                "title": panel.title(),
                "description": panel.description(),
                "mimeType": MIME_TYPE,
            })
        })
        .collect()
}

/// `resources/read`'s contents for a panel, its file URLs on `origin` (the scheme and host the request reached).
pub async fn read_resource(panel: Panel, origin: &str, store: Option<&dyn PanelFiles>) -> Result<Value, PanelError> {
    let origin = origin.trim_end_matches('/');
    let asset_base = format!("{origin}{ASSET_PATH}");
    let text = document(panel, store).await?.replace("%ASSET_BASE%", &asset_base);
    let csp = if panel.loads_assets() { json!({ "resourceDomains": [origin] }) } else { json!({}) };
    Ok(json!({
        "uri": panel.uri(),
        "mimeType": MIME_TYPE,
        "text": text,
        "_meta": { "ui": { "csp": csp, "prefersBorder": true } },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_counts_only_with_the_panels_media_type() {
        let declared = json!({ "extensions": { EXTENSION: { "mimeTypes": [MIME_TYPE] } } });
        assert!(declared_in(Some(&declared)));
        let other_type = json!({ "extensions": { EXTENSION: { "mimeTypes": ["text/html"] } } });
        assert!(!declared_in(Some(&other_type)));
        assert!(!declared_in(Some(&json!({ "extensions": {} }))));
        assert!(!declared_in(None));
    }

    #[test]
    fn only_our_session_ids_say_the_extension_was_declared() {
        let id = new_session_id().expect("random numbers");
        assert!(declared_by_session(Some(&id)), "{id}");
        assert_ne!(Some(id), new_session_id());
        assert!(!declared_by_session(Some("apps-")));
        assert!(!declared_by_session(Some("apps-a b")));
        assert!(!declared_by_session(Some("0f3c9a")));
        assert!(!declared_by_session(Some(&format!("apps-{}", "a".repeat(80)))));
        assert!(!declared_by_session(None));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn every_panel_is_a_whole_document_naming_the_origin_only_where_it_loads_files() {
        for panel in Panel::ALL {
            let read = read_resource(panel, "https://zotero.example.org/", None).await.expect("the panel's files");
            let text = read["text"].as_str().unwrap_or_default();
            assert!(text.trim_start().to_ascii_lowercase().starts_with("<!doctype html>"), "{panel:?}");
            for marker in ["/*SHARED_CSS*/", "/*BRIDGE_JS*/", "/*PANEL_JS*/", "%ASSET_BASE%"] {
                assert!(!text.contains(marker), "{panel:?} still has {marker}");
            }
            // The policy names this server alone, so a panel loads nothing from anywhere else.
            let elsewhere: Vec<&str> = text
                .match_indices("http")
                .map(|(at, _)| &text[at..text.len().min(at + 40)])
                .filter(|url| url.starts_with("http://") || url.starts_with("https://"))
                .filter(|url| !url.starts_with("https://zotero.example.org/apps/"))
                .collect();
            assert!(elsewhere.is_empty(), "{panel:?} names other addresses: {elsewhere:?}");
            let names_origin = text.contains("https://zotero.example.org/apps/");
            assert_eq!(names_origin, panel.loads_assets(), "{panel:?}");
            let domains = &read["_meta"]["ui"]["csp"]["resourceDomains"];
            if panel.loads_assets() {
                assert_eq!(domains, &json!(["https://zotero.example.org"]));
            } else {
                assert!(domains.is_null(), "{panel:?}");
            }
        }
    }

    /// What SECURITY.md and docs/apps.md say of the panels' code: text from a result is never parsed as HTML or run,
    /// nothing is fetched but through the host, only this server's files are imported, and the bridge listens to
    /// the frame's parent alone.
    #[test]
    fn the_panels_put_results_in_as_text_fetch_nothing_and_hear_their_parent_only() {
        let forbidden = [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "EventSource",
            "sendBeacon",
        ];
        for (name, text) in OWN_FILES.iter().filter(|(n, _)| n.ends_with(".js") || n.ends_with(".html")) {
            for word in forbidden {
                assert!(!text.contains(word), "apps/panels/{name} uses {word}");
            }
            for (at, _) in text.match_indices("import(") {
                let rest = &text[at + "import(".len()..];
                assert!(
                    rest.starts_with("ASSET_BASE") || rest.starts_with("\"%ASSET_BASE%"),
                    "{name}: {}",
                    &rest[..40.min(rest.len())]
                );
            }
        }
        let bridge = own_file(BRIDGE_JS).expect("the bridge");
        assert!(bridge.contains("if (event.source !== window.parent) return;"), "the bridge hears its parent only");
    }

    /// A store of the panels' files as the Worker's static assets are: what it holds, by name.
    struct Files(Vec<(&'static str, String)>);

    #[async_trait::async_trait(?Send)]
    impl PanelFiles for Files {
        async fn read(&self, name: &str) -> Result<Option<String>, PanelFilesError> {
            Ok(self.0.iter().find(|(n, _)| *n == name).map(|(_, text)| text.clone()))
        }
    }

    fn review_files(html: &str) -> Files {
        Files(vec![
            ("review.html", html.to_owned()),
            ("review.js", "go();".to_owned()),
            (SHARED_CSS, "body{}".to_owned()),
            (BRIDGE_JS, "bridge();".to_owned()),
        ])
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panel_is_assembled_from_the_store_and_a_broken_one_is_refused_naming_its_file() {
        let whole =
            "<!doctype html><style>/*SHARED_CSS*/</style><script type=module>/*BRIDGE_JS*/\n/*PANEL_JS*/</script>";
        let read = read_resource(Panel::Review, "https://z.example", Some(&review_files(whole))).await.expect("read");
        assert_eq!(read["text"], "<!doctype html><style>body{}</style><script type=module>bridge();\ngo();</script>");
        let twice = format!("{whole}/*PANEL_JS*/");
        let error = read_resource(Panel::Review, "https://z.example", Some(&review_files(&twice))).await.unwrap_err();
        assert!(error.to_string().contains("review.html must hold /*PANEL_JS*/ exactly once"), "{error}");
        let error = read_resource(Panel::Evidence, "https://z.example", Some(&review_files(whole))).await.unwrap_err();
        assert!(error.to_string().contains("apps/panels/evidence.html is missing"), "{error}");
    }
}

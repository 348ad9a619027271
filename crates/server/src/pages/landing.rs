//! `/`: what this server is and how to connect a client to it.

use super::escape_html;
use crate::app::App;
use crate::mcp::origin::request_host;
use crate::platform::{HttpRequest, HttpResponse};

pub async fn page(request: &HttpRequest, app: &App) -> HttpResponse {
    let scheme = request.uri().scheme_str().unwrap_or("https");
    // The host comes from the request and is attacker-controlled: escape it like any other input.
    let mcp_url = escape_html(&format!("{scheme}://{}/mcp", request_host(request)));
    let health = super::health::checks(app);
    let status = if health.status == "ok" {
        "<p class=\"ok\">Configured and ready.</p>".to_owned()
    } else {
        "<p class=\"warn\">Not ready yet: see <a href=\"/health\">/health</a> for what is missing.</p>".to_owned()
    };
    // The fixes are fixed sentences (never a configured value), but escaped all the same.
    let check = super::health::files_check(app).await;
    let files = match check.fix {
        None if check.name == "webdav" => "<p class=\"ok\">Attachment files: the WebDAV server answers.</p>".to_owned(),
        None => "<p class=\"ok\">Attachment files: read from Zotero Storage with this key.</p>".to_owned(),
        Some(fix) => format!("<p class=\"warn\">Attachment files cannot be read yet: {}</p>", escape_html(&fix)),
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>zotero-mcp</title>
<style>
  :root {{ --fg:#1d1d1f; --bg:#fbfbfd; --muted:#5f6368; --card:#fff; --line:#e3e3e8; --accent:#b3261e; }}
  @media (prefers-color-scheme: dark) {{ :root {{ --fg:#ececf1; --bg:#141416; --muted:#a0a0a8; --card:#1e1e22; --line:#2f2f35; --accent:#ff8a80; }} }}
  body {{ font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 0; }}
  main {{ max-width: 44rem; margin: 3rem auto; padding: 0 1.25rem; }}
  h1 {{ font-size: 1.6rem; margin-bottom: .25rem; }} h2 {{ font-size: 1.1rem; margin-top: 2rem; }}
  .lead {{ color: var(--muted); margin-top: 0; }}
  code, pre {{ font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }}
  pre {{ background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; overflow-x: auto; }}
  .url {{ font-size: 1.05rem; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .9rem; word-break: break-all; }}
  .ok {{ color: #1e7d32; }} .warn {{ color: var(--accent); }}
  a {{ color: inherit; }}
</style>
</head>
<body><main>
<h1>zotero-mcp</h1>
<p class="lead">A remote MCP server for one person's Zotero library: search, read and edit references, notes from any MCP client.</p>
{status}
{files}
<h2>MCP endpoint</h2>
<p class="url"><code>{mcp_url}</code></p>
<h2>Connect</h2>
<p><strong>Claude Code</strong></p>
<pre>claude mcp add --transport http zotero {mcp_url}</pre>
<p><strong>Claude</strong> (claude.ai, Desktop): Settings → Connectors → Add custom connector, and paste the endpoint URL.</p>
<p><strong>ChatGPT</strong>: Settings → Apps &amp; Connectors → Create, with the endpoint URL and OAuth authentication.</p>
<p>Each client signs in through this server's login page; tick “write” only for clients that should change the library.</p>
</main></body>
</html>
"#
    );
    crate::respond::html(200, html)
}

//! `zotero-mcp serve --stdio`: newline-delimited JSON-RPC on stdin and stdout, logs on stderr.
//!
//! Each line is answered by the server crate's [`answer_line`], in a task of its own, so a slow tool call does
//! not hold up a quick listing sent after it; answers are written whole, one per line, as they finish. When
//! stdin closes, the calls in flight finish and the process exits.

use std::rc::Rc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use zotero_mcp_server::app::{App, McpAccess};
use zotero_mcp_server::call::Session;
use zotero_mcp_server::mcp::stdio::answer_line;

/// The largest line read (a JSON-RPC request), so a runaway writer cannot grow memory without bound.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Serves until `input` ends. `app.access` must be [`McpAccess::Trusted`]: stdio has no bearer tokens.
pub async fn serve(
    app: App,
    input: impl tokio::io::AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + 'static,
) -> std::io::Result<()> {
    let McpAccess::Trusted(grant) = app.access.clone() else {
        return Err(std::io::Error::other("the stdio server takes no tokens; it needs a trusted grant"));
    };
    let (answers, mut outbox) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::task::spawn_local(async move {
        let mut output = output;
        while let Some(mut line) = outbox.recv().await {
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let app = Rc::new(app);
    let mut lines = BufReader::new(input);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = (&mut lines).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buffer).await?;
        if read == 0 {
            break;
        }
        if buffer.len() > MAX_LINE_BYTES && !buffer.ends_with(b"\n") {
            eprintln!("zotero-mcp: a message longer than {MAX_LINE_BYTES} bytes was dropped");
            // Skip the rest of the oversized line.
            let mut rest = Vec::new();
            lines.read_until(b'\n', &mut rest).await?;
            continue;
        }
        let line = String::from_utf8_lossy(&buffer).into_owned();
        let (app, grant, answers) = (app.clone(), grant.clone(), answers.clone());
        tokio::task::spawn_local(async move {
            // Built per message, as the HTTP endpoint builds it per request: nothing is shared between calls.
            let registry = zotero_mcp_server::tools::registry(&app.config);
            let ctx = Session::new(grant, app.config.clone(), app.platform.clone());
            if let Some(answer) = answer_line(&line, &registry, &ctx).await {
                let _ = answers.send(answer);
            }
        });
    }
    drop(answers);
    writer.await.map_err(std::io::Error::other)?
}

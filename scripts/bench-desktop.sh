#!/usr/bin/env bash
# Zotero Desktop (`zotero-mcp serve --stdio --local`) against the Web API path (`serve --stdio`), per call
# (tests/bench/desktop.mjs): zotero_search and a PDF read (pages 1–5 of the demo's seven-page llncsdoc.pdf, both
# setups checked to answer pages 1–5, over further calls if the server's text budget cuts the first), cold,
# uncached and warm, with the requests each call sends. "Zotero Desktop" is zotero-sim in its local-API mode (as
# Zotero 10), the demo library's files in a data directory laid out as Zotero's; the Web API is zotero-sim with the
# same files on its Zotero Storage.
# Builds the release simulator and native binary itself; needs no Worker. Prints one table; compare within one
# run. Everything listens on loopback and stops when the script exits.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/servers.sh

# bench_prelude (scripts/servers.sh) without its Worker check and its default simulator: this bench starts its own.
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-desktop.XXXXXX")"
PIDS=()
trap bench_cleanup EXIT
cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim -p zotero-mcp-cli --bin zotero-mcp
export SIM_PROFILE=release
ZOTERO_MCP_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-mcp"
# Zotero Desktop: the local API under /api/, the files in $WORK_DIR/zotero/storage/<KEY>/.
mkdir -p "$WORK_DIR/zotero"
start_sim "$WORK_DIR/sim-local.log" --local-api 10 --local-data-dir "$WORK_DIR/zotero"
PIDS+=("$SIM_PID")
LOCAL_URL="$SIM_URL"
start_proxy "$LOCAL_URL" "$WORK_DIR/local-proxy.log"
PIDS+=("$PROXY_PID")
LOCAL_COUNT_URL="$PROXY_URL"

# The Web API with the demo's files on Zotero Storage, timed directly…
start_sim "$WORK_DIR/sim-web.log" --demo-files-on-zotero-storage
PIDS+=("$SIM_PID")
WEB_URL="$SIM_URL"
# …and a second one counted: a proxy in front of its API, another in front of its storage origin, which its
# signed URLs name.
storage_port="$(free_port)"
start_proxy "http://127.0.0.1:$storage_port" "$WORK_DIR/storage-proxy.log"
PIDS+=("$PROXY_PID")
WEB_COUNT_STORAGE="$PROXY_URL"
start_sim "$WORK_DIR/sim-web-counted.log" --storage-listen "127.0.0.1:$storage_port" \
  --storage-origin "$WEB_COUNT_STORAGE" --demo-files-on-zotero-storage
PIDS+=("$SIM_PID")
start_proxy "$SIM_URL" "$WORK_DIR/web-proxy.log"
PIDS+=("$PROXY_PID")
WEB_COUNT_URL="$PROXY_URL"

mkdir -p "$WORK_DIR/logs"
status=0
ZOTERO_MCP_BIN="$ZOTERO_MCP_BIN" LOCAL_URL="$LOCAL_URL" LOCAL_DATA="$WORK_DIR/zotero" WEB_URL="$WEB_URL" \
  LOCAL_COUNT_URL="$LOCAL_COUNT_URL" WEB_COUNT_URL="$WEB_COUNT_URL" WEB_COUNT_STORAGE="$WEB_COUNT_STORAGE" \
  LOG_DIR="$WORK_DIR/logs" timeout 300 node tests/bench/desktop.mjs || status=$?

# What the servers said on stderr about warnings and errors, counted over every server started (20 lines at most).
said="$(cat "$WORK_DIR"/logs/*.stderr 2>/dev/null | grep -i -E 'error|warn|panic' | sort | uniq -c | sort -rn | head -n 20 || true)"
if [ -n "$said" ]; then
  echo "the servers' stderr, warnings and errors (count, line):"
  echo "$said"
fi
exit "$status"

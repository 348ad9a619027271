#!/usr/bin/env bash
# zotero_check_references on hostile manuscripts of a million characters (the security review's four shapes: one
# reference of initials, `See \cite{kN}.` repeated, Pandoc `@kN` on one line, DOIs one per line; and two that stay
# within the limits) against the release native server over the release simulator, registries off, read-only.
# A fresh server per shape; tests/bench/check-references-hostile.mjs prints, per shape, the server's CPU seconds
# for the call, its peak RSS and the slowest GET /health polled every 50 ms meanwhile. Targets: under 2 s of CPU,
# under 200 MB, /health within 0.5 s. Needs only the native build (no Worker); scripts/bench-check-references.sh
# runs it after its own table.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/servers.sh
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-refcheck-hostile.XXXXXX")"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  rm -rf "$WORK_DIR"
}
trap cleanup EXIT
cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim -p zotero-mcp-cli --bin zotero-mcp
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-mcp"
SIM_PROFILE=release start_sim "$WORK_DIR/sim.log"
PIDS+=("$SIM_PID")
CLK_TCK="$(getconf CLK_TCK)"
export CLK_TCK

for shape in ${HOSTILE_SHAPES:-initials latex pandoc dois latex-within-limits pandoc-within-limits}; do
  port="$(free_port)"
  # Loopback without a token: the trusted grant, read-only by --read-only.
  ZOTERO_API_BASE="$SIM_URL" ZOTERO_API_KEY=demo ZOTERO_LIBRARY_ID=1234567 \
    ZOTERO_MCP_DATA_DIR="$WORK_DIR/data-$shape" \
    "$BIN" serve --http "127.0.0.1:$port" --read-only --exit-after 900 </dev/null >"$WORK_DIR/server-$shape.log" 2>&1 &
  server=$!
  PIDS+=("$server")
  wait_ready "$server" "http://127.0.0.1:$port/mcp"
  SHAPE="$shape" SERVER_PID="$server" SERVER_URL="http://127.0.0.1:$port" \
    timeout 900 node tests/bench/check-references-hostile.mjs
  stop_pid "$server"
done

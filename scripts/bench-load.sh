#!/usr/bin/env bash
# The load figure of SECURITY.md (tests/bench/load.mjs): 200 concurrent MCP tool calls and 50 concurrent
# sign-in attempts against the release Worker under `wrangler dev` and against the native server, each with
# a fresh store, on loopback. Needs the release Worker (make build); builds the release native binary and the
# simulator itself. Exits non-zero if a tool call failed or a limiter's count was not exact.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
[ -f build/worker/shim.mjs ] || { echo "bench: build/worker/shim.mjs is missing: run make build first" >&2; exit 1; }
. scripts/servers.sh

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-load.XXXXXX")"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  rmdir tests/e2e/.wrangler/tmp tests/e2e/.wrangler 2>/dev/null || true
  rm -rf "$WORK_DIR"
}
trap cleanup EXIT

cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim -p zotero-mcp-cli --bin zotero-mcp
SIM_PROFILE=release start_sim "$WORK_DIR/sim.log"
PIDS+=("$SIM_PID")
ZOTERO_MCP_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-mcp"

worker_port="$(free_port)"
start_worker "$worker_port" "$WORK_DIR/worker.log"
PIDS+=("$SERVER_PID")
wait_ready "$SERVER_PID" "http://127.0.0.1:$worker_port/mcp"

native_port="$(free_port)"
start_native "$native_port" "$WORK_DIR/native.log"
PIDS+=("$SERVER_PID")
wait_ready "$SERVER_PID" "http://127.0.0.1:$native_port/mcp"

# Under `wrangler dev` the test sets CF-Connecting-IP itself (as Cloudflare's edge would), so the Worker is
# loaded from many addresses; the native server takes the address from the socket.
TARGETS="worker=http://127.0.0.1:$worker_port/mcp=addresses native=http://127.0.0.1:$native_port/mcp=loopback" \
  node tests/bench/load.mjs

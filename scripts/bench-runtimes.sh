#!/usr/bin/env bash
# The native server's and the Worker's per-call time on the same calls (tests/bench/runtimes.mjs).
# Needs the release Worker (make build); builds the release native binary and the simulator itself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
[ -f build/worker/shim.mjs ] || { echo "bench: build/worker/shim.mjs is missing: run make build first" >&2; exit 1; }
. scripts/servers.sh

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-bench.XXXXXX")"
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
WORKER_URL="http://127.0.0.1:$worker_port/mcp"
wait_ready "$SERVER_PID" "$WORKER_URL"

native_port="$(free_port)"
start_native "$native_port" "$WORK_DIR/native.log"
PIDS+=("$SERVER_PID")
NATIVE_URL="http://127.0.0.1:$native_port/mcp"
wait_ready "$SERVER_PID" "$NATIVE_URL"

WORKER_URL="$WORKER_URL" NATIVE_URL="$NATIVE_URL" node tests/bench/runtimes.mjs

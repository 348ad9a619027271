#!/usr/bin/env bash
# The native server's and the Worker's per-call time on the same calls (tests/bench/runtimes.mjs).
# Needs the release Worker (make build); builds the release native binary and the simulator itself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
. scripts/servers.sh
bench_prelude bench

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

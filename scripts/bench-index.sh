#!/usr/bin/env bash
# The semantic index (`make bench`): two measurements, figures only (compare within one run; the machine is noisy).
#
# 1. The sync natively, in-process (crates/server/examples/bench_index_sync.rs): the demo library grown to 5,000
#    regular items, 30% with a PDF in Zotero's full-text index, synced from an empty index until complete with
#    the deployed defaults (limit 100, budget 40, full text on), with full text off, and with a paid plan's
#    budget (1,000): runs, items per run, Zotero requests per item, how each run's budget was spent, time per item.
# 2. zotero_semantic_search through the release Worker under `wrangler dev` (tests/bench/semantic.mjs): the
#    demo library indexed by firing the cron, then 100 searches timed against a ping floor, less the AI Search
#    stand-in's own search time (timed in Node on the same documents) and, separately, the Zotero subrequest as
#    an empty Worker (tests/bench/floor-worker) prices it.
#
# Needs the release Worker (make build). BENCH_ROUNDS sets the searches timed (default 100).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
FLOOR_CONFIG="tests/bench/floor-worker/wrangler.toml"
WRANGLER="node_modules/.bin/wrangler"
. scripts/servers.sh

# The empty Worker of tests/bench/floor-worker, set up like start_worker (as scripts/bench-sidebyside.sh does).
start_floor() {
  local port="$1" log="$2"
  (
    export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
    export WRANGLER_HIDE_BANNER=true WRANGLER_LOG_PATH="$WORK_DIR/wrangler-debug"
    exec "$WRANGLER" dev --config "$FLOOR_CONFIG" --ip 127.0.0.1 --port "$port" \
      --persist-to "$WORK_DIR/floor-state" --show-interactive-dev-session=false --log-level warn
  ) </dev/null >"$log" 2>&1 &
  SERVER_PID=$!
}

bench_prelude index

cargo build --quiet --locked --release -p zotero-mcp-server --example bench_index_sync
EXAMPLE="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/bench_index_sync"

echo "== 1. The sync, natively (in-process simulator and AI Search stand-in) =="
echo
"$EXAMPLE" | tee "$WORK_DIR/sync.out" | grep -v '^@summary '

echo
echo "== 2. zotero_semantic_search through the Worker (wrangler dev, release wasm) =="
echo
# The demo library's documents as the sync builds them, for the stand-in timed in Node.
"$EXAMPLE" --dump-demo-documents "$WORK_DIR/demo-documents.json"
port="$(free_port)"
# At the floor's log level (warn): wrangler's line per request at info would be counted as the Worker's time.
WRANGLER_LOG_LEVEL=warn start_worker "$port" "$WORK_DIR/worker.log"
PIDS+=("$SERVER_PID")
WORKER_URL="http://127.0.0.1:$port/mcp"
wait_ready "$SERVER_PID" "$WORKER_URL"
# Only once the Worker is up: two `wrangler dev` starting at once can race for the same inspector port.
port="$(free_port)"
start_floor "$port" "$WORK_DIR/floor.log"
PIDS+=("$SERVER_PID")
FLOOR_URL="http://127.0.0.1:$port/"
wait_ready "$SERVER_PID" "$FLOOR_URL"
WORKER_URL="$WORKER_URL" FLOOR_URL="$FLOOR_URL" SIM_URL="$SIM_URL" DOCUMENTS="$WORK_DIR/demo-documents.json" \
  node tests/bench/semantic.mjs | tee "$WORK_DIR/search.out" | grep -v '^@summary '

echo
echo "== Summary =="
echo
echo "| measurement | figure | goal |"
echo "|---|---|---|"
cat "$WORK_DIR/sync.out" "$WORK_DIR/search.out" | sed -n 's/^@summary \(.*\)$/| \1 |/p'

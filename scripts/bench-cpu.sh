#!/usr/bin/env bash
# CPU milliseconds per MCP call of the release Worker, cold and warm, against the free plan's 10 ms
# (tests/bench/cpu.mjs; docs/performance.md, "Free plan: CPU per call").
#
# Starts, all on 127.0.0.1 and each with a lifetime: the release zotero-sim on the demo library with its files on
# its Zotero Storage, the metadata services' stand-in (tests/e2e/sources-stub.mjs), and (unless SCALE_ITEMS=0) a
# second zotero-sim on a synthetic library. tests/bench/cpu.mjs then runs build/ in Miniflare alone (one workerd
# process, whose threads' schedstat it reads around each call) and a trivial Worker for the floor. Needs the
# release Worker (make build); builds the release simulator itself.
#
# Environment knobs (tests/bench/cpu.mjs describes them):
#   COLD_ROUNDS=3  BENCH_WARMUP=30  BENCH_ROUNDS=40  CPU_CALLS="label,label"  SCALE_ITEMS=10000  CPU_JSON=<file>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/servers.sh

[ -d node_modules/miniflare ] || { echo "bench-cpu: node_modules/miniflare is missing: run make setup first" >&2; exit 1; }
bench_prelude cpu
# bench_prelude's simulator keeps the demo's files off Zotero Storage; the Worker here reads and writes them there.
stop_pid "$SIM_PID"
SIM_PROFILE=release start_sim "$WORK_DIR/sim.log" --demo-files-on-zotero-storage
PIDS+=("$SIM_PID")
start_sources "$WORK_DIR/sources.log"
PIDS+=("$SOURCES_PID")

SCALE_ITEMS="${SCALE_ITEMS:-10000}"
SCALE_SIM_URL=""
if [ "$SCALE_ITEMS" != 0 ]; then
  port="$(free_port)"
  "${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-sim" --listen "127.0.0.1:$port" --synthetic "$SCALE_ITEMS" --seed 1 \
    --api-key demo --exit-after 1800 >"$WORK_DIR/scale-sim.log" 2>&1 &
  scale_pid=$!
  PIDS+=("$scale_pid")
  wait_listening "$scale_pid" "$WORK_DIR/scale-sim.log" "zotero-sim --synthetic"
  SCALE_SIM_URL="http://127.0.0.1:$port"
fi

# Miniflare's workerd processes are children of node, which disposes of them on exit, on TERM and at its own
# deadline (CPU_DEADLINE_S, 1500 s); timeout bounds node itself.
SIM_URL="$SIM_URL" SOURCES_URL="$SOURCES_TEST_BASE_URL" SCALE_SIM_URL="$SCALE_SIM_URL" SCALE_ITEMS="$SCALE_ITEMS" \
  CPU_STATE_DIR="$WORK_DIR/state" timeout 1800 node tests/bench/cpu.mjs

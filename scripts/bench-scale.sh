#!/usr/bin/env bash
# The scale table (docs/performance.md, "Scale"): the whole-library tools over synthetic libraries of 1,000,
# 10,000 and 50,000 items, from the library mirror, on the native server and the Worker.
#
# Per size, all on 127.0.0.1: the release zotero-sim with `--synthetic N` (the personal library 1234567, key
# `demo`) <- the counting proxy (tests/bench/counting-proxy.mjs) <- the native server (`zotero-mcp serve --http`,
# mirror.sqlite3 in a fresh data directory) and the release Worker under `wrangler dev` (tests/bench/scale-worker/:
# a fresh local D1, no AI Search). tests/bench/scale.mjs then measures, per server: the first fill (calls on the
# native server, scheduled runs on the Worker), each tool after it, an incremental sync after 3 changes made
# upstream, and the mirror's size on disk; and prints the table after the last size.
# Needs the release Worker (make build); builds the release simulator and native binary itself.
#
# Environment knobs:
#   SCALE_SIZES="1000 10000 50000"   library sizes (top-level items)
#   SCALE_TARGETS="native worker"    which servers
#   SCALE_ROUNDS=5                   measured calls of each tool after the fill (the median is printed)
#   SCALE_SEED=1                     the synthetic library's seed
#   SCALE_JSON=<file>                also write every figure there (JSON lines)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/bench/scale-worker/wrangler.toml"
WRANGLER="node_modules/.bin/wrangler"
SIZES="${SCALE_SIZES:-1000 10000 50000}"
TARGETS="${SCALE_TARGETS:-native worker}"
. scripts/servers.sh
bench_prelude scale
# bench_prelude started the demo simulator; this bench serves synthetic libraries instead.
stop_pid "$SIM_PID"
BASE_DIR="$WORK_DIR"
# Whatever size was under way, the cleanup removes the whole run.
trap 'WORK_DIR="$BASE_DIR"; bench_cleanup' EXIT
RESULTS="$BASE_DIR/results.jsonl"
: >"$RESULTS"
SIM_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-sim"

for size in $SIZES; do
  # Each size in its own directory: a fresh mirror (native data directory, the Worker's --persist-to).
  WORK_DIR="$BASE_DIR/$size"
  mkdir -p "$WORK_DIR"
  port="$(free_port)"
  "$SIM_BIN" --listen "127.0.0.1:$port" --synthetic "$size" --seed "${SCALE_SEED:-1}" --api-key demo --control \
    --exit-after 3600 >"$WORK_DIR/sim.log" 2>&1 &
  sim_pid=$!
  PIDS+=("$sim_pid")
  wait_listening "$sim_pid" "$WORK_DIR/sim.log" zotero-sim
  DIRECT_URL="http://127.0.0.1:$port"
  start_proxy "$DIRECT_URL" "$WORK_DIR/proxy.log" 0 3600
  PIDS+=("$PROXY_PID")
  # The servers' Zotero is the proxy (start_worker and start_native read SIM_URL).
  SIM_URL="$PROXY_URL"
  WORKER_URL="" NATIVE_URL="" WORKER_PID="" NATIVE_PID=""
  case " $TARGETS " in *" worker "*)
    port="$(free_port)"
    WRANGLER_LOG_LEVEL=warn start_worker "$port" "$WORK_DIR/worker.log"
    WORKER_PID="$SERVER_PID"
    PIDS+=("$WORKER_PID")
    WORKER_URL="http://127.0.0.1:$port/mcp"
    wait_ready "$WORKER_PID" "$WORKER_URL"
    ;;
  esac
  case " $TARGETS " in *" native "*)
    port="$(free_port)"
    start_native "$port" "$WORK_DIR/native.log"
    NATIVE_PID="$SERVER_PID"
    PIDS+=("$NATIVE_PID")
    NATIVE_URL="http://127.0.0.1:$port/mcp"
    wait_ready "$NATIVE_PID" "$NATIVE_URL"
    ;;
  esac
  echo "scale: $size items: simulator $DIRECT_URL, proxy $PROXY_URL${NATIVE_URL:+, native $NATIVE_URL}${WORKER_URL:+, worker $WORKER_URL}" >&2
  SIZE="$size" SIM_URL="$DIRECT_URL" PROXY_URL="$PROXY_URL" WORKER_URL="$WORKER_URL" NATIVE_URL="$NATIVE_URL" \
    NATIVE_DATA="$WORK_DIR/native-data" WORKER_STATE="$WORK_DIR/state" RESULTS="$RESULTS" \
    timeout 3000 node tests/bench/scale.mjs measure
  for pid in $WORKER_PID $NATIVE_PID "$PROXY_PID" "$sim_pid"; do stop_pid "$pid"; done
done
WORK_DIR="$BASE_DIR"
node tests/bench/scale.mjs report "$RESULTS"
if [ -n "${SCALE_JSON:-}" ]; then cp "$RESULTS" "$SCALE_JSON"; fi

#!/usr/bin/env bash
# zotero_retrieve over a 300-page PDF through the Worker and the native server (tests/bench/retrieve.mjs): the
# PDF is generated (tests/bench/long-pdf.py), stored on the simulator's Zotero Storage as the demo attachment
# UN79YVS8's new file, then ranked cold (download, extract, cache) and cached. Needs the release Worker (make
# build). Prints one table; compare within one run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
. scripts/servers.sh
bench_prelude retrieve
python3 tests/bench/long-pdf.py "$WORK_DIR/long.pdf" 300
stop_pid "$SIM_PID"
storage_port="$(free_port)"
SIM_PROFILE=release start_sim "$WORK_DIR/sim-storage.log" --storage-listen "127.0.0.1:$storage_port" \
  --storage-origin "http://127.0.0.1:$storage_port"
PIDS+=("$SIM_PID")
export FILE_STORAGE=zotero
start_both_servers
ITEM=KPDKK5UT ATTACHMENT=UN79YVS8 UPLOAD="$WORK_DIR/long.pdf" WORKER_URL="$WORKER_URL" NATIVE_URL="$NATIVE_URL" \
  node tests/bench/retrieve.mjs

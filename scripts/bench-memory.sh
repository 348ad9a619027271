#!/usr/bin/env bash
# What the native server holds at its peak (tests/bench/memory.mjs), release builds over the simulator:
#   (i)  a 40 MiB file stored on Zotero Storage through `serve --http` (zotero_put_attachment): the peak resident
#        set's rise, against 2× the file;
#   (ii) three reads at once of a 60 MiB linked PDF through `serve --http --local` (zotero-sim --local-api 10):
#        the peak resident set, against 300 MB.
# Linux only (the kernel's VmHWM). Builds the release simulator and native binary itself; needs no Worker.
# Everything listens on loopback and stops when the script exits.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/servers.sh

# bench_prelude (scripts/servers.sh) without its Worker check and its default simulator: this bench starts its own.
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-memory.XXXXXX")"
PIDS=()
trap bench_cleanup EXIT
cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim -p zotero-mcp-cli --bin zotero-mcp
export SIM_PROFILE=release
ZOTERO_MCP_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-mcp"

# The Web API with its Zotero Storage origin on a port of its own (as scripts/e2e.sh starts it).
start_sim "$WORK_DIR/sim-storage.log" --storage-listen "127.0.0.1:$(free_port)"
PIDS+=("$SIM_PID")
STORAGE_SIM_URL="$SIM_URL"
# Zotero Desktop: the local API under /api/, the files in $WORK_DIR/zotero, the linked one in $WORK_DIR/zotero-papers.
mkdir -p "$WORK_DIR/zotero"
start_sim "$WORK_DIR/sim-local.log" --local-api 10 --local-data-dir "$WORK_DIR/zotero"
PIDS+=("$SIM_PID")
LOCAL_SIM_URL="$SIM_URL"

ZOTERO_MCP_BIN="$ZOTERO_MCP_BIN" STORAGE_SIM_URL="$STORAGE_SIM_URL" LOCAL_SIM_URL="$LOCAL_SIM_URL" \
  LOCAL_DATA="$WORK_DIR/zotero" WORK_DIR="$WORK_DIR" timeout 600 node tests/bench/memory.mjs

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

start_both_servers

WORKER_URL="$WORKER_URL" NATIVE_URL="$NATIVE_URL" node tests/bench/runtimes.mjs

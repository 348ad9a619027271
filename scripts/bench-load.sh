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
. scripts/servers.sh
bench_prelude load

start_both_servers

# Under `wrangler dev` the test sets CF-Connecting-IP itself (as Cloudflare's edge would), so the Worker is
# loaded from many addresses; the native server takes the address from the socket.
TARGETS="worker=$WORKER_URL=addresses native=$NATIVE_URL=loopback" \
  node tests/bench/load.mjs

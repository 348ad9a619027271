#!/usr/bin/env bash
# Side-by-side latency and Zotero request count per MCP call (tests/bench/sidebyside.mjs, issue 10).
#
# Starts, all on 127.0.0.1 and each with a time limit:
#   zotero-sim (demo library) <- counting proxy (tests/bench/counting-proxy.mjs) <- the release Worker under
#   `wrangler dev` (ZOTERO_API_BASE = the proxy), and an empty Worker (tests/bench/floor-worker/) whose
#   latency is the fixed cost of any request through local workerd.
# Then prints, per call: median latency, upstream requests, sequential steps, upstream time and the server's own
# time. Needs the release Worker (make build); builds the release simulator itself.
#
# Environment knobs:
#   BENCH_ROUNDS=60      measured rounds
#   BENCH_WARMUP=30      unmeasured rounds before them
#   BENCH_CALLS="server/discover,search 25"  only these calls (their labels in tests/bench/sidebyside.mjs)
#   BENCH_COMPARE="name=mcpUrl[=proxyUrl[=token]] ..."
#                        more targets, measured interleaved with this Worker; their own/first ratio is printed.
#                        Example, a local copy of the TypeScript cloudflare-zotero-mcp on port 8788:
#                          target/release/zotero-sim --listen 127.0.0.1:9998 --demo --api-key demo --exit-after 3600 &
#                          node tests/bench/counting-proxy.mjs http://127.0.0.1:9998 --port 9999 --exit-after 3600 &
#                          # start it with ZOTERO_API_BASE=http://127.0.0.1:9999, ZOTERO_API_KEY=demo,
#                          # ZOTERO_LIBRARY_ID=1234567 under `wrangler dev --log-level warn` (as this Worker and
#                          # the floor run: at info, wrangler's line per request costs ~0.6 ms), then get a
#                          # bearer token from it:
#                          BENCH_COMPARE="ts=http://127.0.0.1:8788/mcp=http://127.0.0.1:9999=TOKEN" make bench
#                        Install its dependencies at the versions its bun.lock pins (`bun install --frozen-lockfile`,
#                        or npm with those exact versions): a plain `npm install` resolves newer releases of the MCP
#                        SDK and the OAuth provider, which do less per request (docs/performance.md has both).
#                        Under wrangler 4.86 it needs `--local` and `--compatibility-date 2026-05-03`, and its
#                        Zotero base URL must be made configurable (it hard-codes api.zotero.org).
#                        Without a token the bench runs this project's OAuth flow (tests/e2e/helpers.mjs) against it;
#                        without a proxy URL its upstream columns are empty and own = latency - floor.
#   BENCH_UPSTREAM_DELAY_MS=20  each Zotero answer held this long by the proxy, standing in for a real round
#                        trip, so requests sent together show as one step (0: the simulator as fast as it is)
#   BENCH_LIFETIME=1800  seconds after which every server started here stops by itself
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
FLOOR_CONFIG="tests/bench/floor-worker/wrangler.toml"
LIFETIME="${BENCH_LIFETIME:-1800}"
. scripts/servers.sh

# `wrangler dev` has no time limit of its own; start_worker runs "$WRANGLER", so a wrapper under timeout(1)
# gives it one. On TERM (stop_pid), timeout passes the signal to wrangler and workerd and waits for them.
bounded_wrangler() {
  local wrapper="$WORK_DIR/wrangler"
  printf '#!/bin/sh\nexec timeout %s %q "$@"\n' "$LIFETIME" "$ROOT/node_modules/.bin/wrangler" >"$wrapper"
  chmod +x "$wrapper"
  WRANGLER="$wrapper"
}

# The empty floor Worker, set up like start_worker (same wrangler environment) but with no vars or state.
start_floor() {
  local port="$1" log="$2"
  (
    export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
    export WRANGLER_HIDE_BANNER=true WRANGLER_LOG_PATH="$WORK_DIR/wrangler-debug"
    exec "$WRANGLER" dev \
      --config "$FLOOR_CONFIG" \
      --ip 127.0.0.1 \
      --port "$port" \
      --persist-to "$WORK_DIR/floor-state" \
      --show-interactive-dev-session=false \
      --log-level warn
  ) </dev/null >"$log" 2>&1 &
  SERVER_PID=$!
}

# wait_ready, and on failure the server's log (the work directory goes with the cleanup).
ready_or_log() {
  local pid="$1" url="$2" log="$3"
  wait_ready "$pid" "$url" || { echo "--- $log" >&2; tail -n 40 "$log" >&2; return 1; }
}

bench_prelude sidebyside
bounded_wrangler
start_proxy "$SIM_URL" "$WORK_DIR/proxy.log" "${BENCH_UPSTREAM_DELAY_MS:-20}" "$LIFETIME"
PIDS+=("$PROXY_PID")

# start_worker points ZOTERO_API_BASE at $SIM_URL: make that the proxy. Wrangler logs at warn, as the floor does:
# its line per request at info costs ~0.6 ms, which the floor would not subtract.
SIM_URL="$PROXY_URL"
worker_port="$(free_port)"
WRANGLER_LOG_LEVEL=warn start_worker "$worker_port" "$WORK_DIR/worker.log"
PIDS+=("$SERVER_PID")
WORKER_URL="http://127.0.0.1:$worker_port/mcp"
ready_or_log "$SERVER_PID" "$WORKER_URL" "$WORK_DIR/worker.log"

# Only once the Worker is up: two `wrangler dev` starting at once can race for the same inspector port.
floor_port="$(free_port)"
start_floor "$floor_port" "$WORK_DIR/floor.log"
PIDS+=("$SERVER_PID")
FLOOR_URL="http://127.0.0.1:$floor_port/"
ready_or_log "$SERVER_PID" "$FLOOR_URL" "$WORK_DIR/floor.log"

TARGETS="rust=$WORKER_URL=$PROXY_URL ${BENCH_COMPARE:-}" FLOOR_URL="$FLOOR_URL" \
  PONG_URL="$PROXY_URL/__pong" PONG_DELAY_MS="${BENCH_UPSTREAM_DELAY_MS:-20}" node tests/bench/sidebyside.mjs

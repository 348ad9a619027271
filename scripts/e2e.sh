#!/usr/bin/env bash
# End-to-end tests against the built Worker.
#
# Serves the prebuilt worker-build output (build/worker/shim.mjs) under `wrangler dev` on a free
# loopback port with throw-away local KV, then runs:
#   1. node --test tests/e2e/*.test.mjs  (official MCP clients in both eras, their OAuth support, raw HTTP)
#   2. the `oauth2` crate as OAuth client (crates/cli/tests/get_token_flow.rs, ignored in plain `cargo test`)
#   3. scripts/conformance.sh             (the applicable @modelcontextprotocol/conformance scenarios)
# Every request to /mcp needs a bearer token: each step gets its own through the real OAuth flow with the
# test password of tests/e2e/wrangler.test.toml.
# and stops wrangler on the way out. Exit status: non-zero when either step failed.
#
# Environment knobs:
#   E2E_PORT=<n>                 use this port instead of a free one
#   E2E_READY_TIMEOUT=<seconds>  how long to wait for the Worker (default 60)
#   E2E_SKIP_CONFORMANCE=1       skip the conformance suite
#   E2E_SKIP_OAUTH2=1            skip the oauth2 crate client
#   E2E_TEST_FILES="a b"         run only these test files (default tests/e2e/*.test.mjs)
#   E2E_KEEP_LOG=1               keep the wrangler log (its path is printed)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SHIM="build/worker/shim.mjs"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
READY_TIMEOUT="${E2E_READY_TIMEOUT:-60}"

die() {
  echo "e2e: $*" >&2
  exit 1
}

[ -f "$SHIM" ] || die "$SHIM is missing: run make build first"
[ -f "$CONFIG" ] || die "$CONFIG is missing"
[ -x "$WRANGLER" ] || die "$WRANGLER is missing: run npm ci (or scripts/setup.sh) first"
command -v node >/dev/null || die "node is not on PATH"

# A free port on 127.0.0.1: bind port 0, read what the kernel picked, release it.
free_port() {
  node -e '
    const s = require("node:net").createServer();
    s.listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); });
  '
}
PORT="${E2E_PORT:-$(free_port)}"
[[ "$PORT" =~ ^[0-9]+$ ]] || die "could not pick a free port (got '$PORT')"

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-e2e.XXXXXX")"
LOG="$WORK_DIR/wrangler.log"
WRANGLER_PID=""
SIM_PID=""
SIM_PORT="$(free_port)"
[ "$SIM_PORT" != "$PORT" ] || SIM_PORT="$(free_port)"
[[ "$SIM_PORT" =~ ^[0-9]+$ ]] || die "could not pick a free port for zotero-sim (got '$SIM_PORT')"

stop_wrangler() {
  [ -n "$WRANGLER_PID" ] || return 0
  if kill -0 "$WRANGLER_PID" 2>/dev/null; then
    # wrangler forwards TERM to its CLI child, which stops workerd.
    kill -TERM "$WRANGLER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$WRANGLER_PID" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$WRANGLER_PID" 2>/dev/null; then
      echo "e2e: wrangler (pid $WRANGLER_PID) ignored TERM for 10 s; sending KILL" >&2
      kill -KILL "$WRANGLER_PID" 2>/dev/null || true
    fi
  fi
  wait "$WRANGLER_PID" 2>/dev/null || true
  WRANGLER_PID=""
}

cleanup() {
  local rc=$?
  trap - EXIT
  stop_wrangler
  [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
  # wrangler bundles into <config dir>/.wrangler/tmp/<run> and removes <run>; drop the empty shell.
  rmdir tests/e2e/.wrangler/tmp tests/e2e/.wrangler 2>/dev/null || true
  if [ "$rc" -ne 0 ] && [ -s "$LOG" ]; then
    echo "--- wrangler log (last 80 lines of $LOG) ---" >&2
    tail -n 80 "$LOG" >&2 || true
    echo "--- end of wrangler log ---" >&2
  fi
  if [ "${E2E_KEEP_LOG:-}" = "1" ]; then
    echo "e2e: wrangler log kept at $LOG" >&2
  else
    rm -rf "$WORK_DIR"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The Worker's Zotero is the simulator with the demo library, on loopback; it stops by itself after 30 minutes
# at the latest, even if this script is killed before its cleanup runs.
cargo build --quiet -p zotero-sim --bin zotero-sim
SIM_LOG="$WORK_DIR/zotero-sim.log"
target/debug/zotero-sim --listen "127.0.0.1:$SIM_PORT" --demo --api-key demo --exit-after 1800 >"$SIM_LOG" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 100); do
  grep -q 'listening' "$SIM_LOG" 2>/dev/null && break
  kill -0 "$SIM_PID" 2>/dev/null || die "zotero-sim exited: $(cat "$SIM_LOG")"
  sleep 0.1
done
echo "e2e: zotero-sim (demo library) on 127.0.0.1:$SIM_PORT"

echo "e2e: starting wrangler dev on 127.0.0.1:$PORT (log: $LOG)"
(
  export WRANGLER_SEND_METRICS=false
  export WRANGLER_SEND_ERROR_REPORTS=false
  export CLOUDFLARE_CF_FETCH_ENABLED=false
  export WRANGLER_HIDE_BANNER=true
  # Keep wrangler's debug log with the run instead of ~/.config/.wrangler/logs.
  export WRANGLER_LOG_PATH="$WORK_DIR/wrangler-debug"
  # exec: the background job's pid is wrangler's own, so TERM reaches it directly.
  exec "$WRANGLER" dev \
    --config "$CONFIG" \
    --ip 127.0.0.1 \
    --port "$PORT" \
    --persist-to "$WORK_DIR/state" \
    --show-interactive-dev-session=false \
    --var "ZOTERO_API_BASE:http://127.0.0.1:$SIM_PORT" --var ZOTERO_API_KEY:demo --var ZOTERO_LIBRARY_ID:1234567 \
    --log-level info
) </dev/null >"$LOG" 2>&1 &
WRANGLER_PID=$!

MCP_URL="http://127.0.0.1:$PORT/mcp"
export MCP_URL

# Ready = POST /mcp gets any HTTP answer from the Worker (not a proxy 502/503/504).
probe() {
  node -e '
    fetch(process.argv[1], {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
      signal: AbortSignal.timeout(2000),
    }).then(
      (r) => process.exit([502, 503, 504].includes(r.status) ? 1 : 0),
      () => process.exit(1),
    );
  ' "$MCP_URL"
}

deadline=$((SECONDS + READY_TIMEOUT))
until probe; do
  if ! kill -0 "$WRANGLER_PID" 2>/dev/null; then
    die "wrangler exited before the Worker answered (see the log below)"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    die "the Worker did not answer POST $MCP_URL within ${READY_TIMEOUT}s"
  fi
  sleep 0.5
done
echo "e2e: Worker is answering at $MCP_URL"

if [ -n "${E2E_TEST_FILES:-}" ]; then
  # shellcheck disable=SC2206  # word splitting of the list is intended
  TEST_FILES=($E2E_TEST_FILES)
else
  TEST_FILES=(tests/e2e/*.test.mjs)
fi

set +e
node --test --test-reporter=spec --test-timeout=300000 "${TEST_FILES[@]}" 2>&1 | tee "$WORK_DIR/node.log"
TEST_RC=${PIPESTATUS[0]}
OAUTH2_RC=0
if [ "${E2E_SKIP_OAUTH2:-}" != "1" ]; then
  echo "e2e: the oauth2 crate as OAuth client (crates/cli/tests/get_token_flow.rs)"
  ZOTERO_MCP_PASSWORD=test-password cargo test --locked --quiet -p zotero-mcp-cli --test get_token_flow -- --ignored 2>&1 \
    | tee "$WORK_DIR/oauth2.log"
  OAUTH2_RC=${PIPESTATUS[0]}
fi
CONF_RC=0
if [ "${E2E_SKIP_CONFORMANCE:-}" != "1" ]; then
  scripts/conformance.sh "$MCP_URL" 2>&1 | tee "$WORK_DIR/conformance.log"
  CONF_RC=${PIPESTATUS[0]}
fi
set -e

# One closing line with the totals of both steps, in the plain "N passed, N failed" form.
# A log that does not exist (conformance skipped) counts as nothing rather than stopping the script.
count() { [ -f "$2" ] && sed -n "s/$1/\1/p" "$2" | tail -n 1 || true; }
node_pass=$(count '^ℹ pass \([0-9]*\)$' "$WORK_DIR/node.log"); node_fail=$(count '^ℹ fail \([0-9]*\)$' "$WORK_DIR/node.log")
conf_pass=$(count '.*conformance summary: \([0-9]*\) passed.*' "$WORK_DIR/conformance.log")
conf_fail=$(count '.*conformance summary: [0-9]* passed, \([0-9]*\) failed.*' "$WORK_DIR/conformance.log")
oauth2_pass=$(count '^test result: .* \([0-9]*\) passed.*' "$WORK_DIR/oauth2.log")
oauth2_fail=$(count '^test result: .* [0-9]* passed; \([0-9]*\) failed.*' "$WORK_DIR/oauth2.log")
echo "e2e: node tests exit $TEST_RC, oauth2 client exit $OAUTH2_RC, conformance exit $CONF_RC"
echo "e2e: $(( ${node_pass:-0} + ${oauth2_pass:-0} + ${conf_pass:-0} )) passed, $(( ${node_fail:-0} + ${oauth2_fail:-0} + ${conf_fail:-0} )) failed"
for rc in "$TEST_RC" "$OAUTH2_RC" "$CONF_RC"; do
  if [ "$rc" -ne 0 ]; then
    exit "$rc"
  fi
done
exit 0

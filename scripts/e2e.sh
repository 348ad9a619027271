#!/usr/bin/env bash
# End-to-end tests against both runtimes: the built Worker and the native `zotero-mcp` binary.
#
# Starts zotero-sim (the demo library) on loopback, then the same suite runs against each HTTP server:
#   worker: the release build (build/worker/shim.mjs, scripts/build.sh) under `wrangler dev`, throw-away local KV
#   native: `zotero-mcp serve --http` with the same variables, its redb store in a temp directory
# The suite, for each:
#   1. node --test tests/e2e/*.test.mjs  (official MCP clients in both eras, their OAuth support, raw HTTP); then,
#      for the Worker only, tests/e2e/worker-entry/ (the JavaScript entry, and the recovery from a trap)
#   2. the `oauth2` crate as OAuth client (crates/cli/tests/get_token_flow.rs, ignored in plain `cargo test`)
#   3. scripts/conformance.sh             (the applicable @modelcontextprotocol/conformance scenarios)
#   4. `zotero-mcp e2e` (crates/cli/src/commands/e2e): read-only, then --write, then --write with a Zotero failure
#      injected at the highlight (zotero-sim --control), which must fail there and still remove what it created
# Every request to /mcp needs a bearer token: each step gets its own through the real OAuth flow with the
# test password of tests/e2e/wrangler.test.toml (the native server gets the same variables).
# Then, once: `zotero-mcp serve --stdio` driven by the official clients' stdio transports
# (tests/e2e/stdio: @modelcontextprotocol/client in both eras, and the Python `mcp` SDK).
# Everything started here is stopped on the way out. Each run prints its passed, failed and skipped tests, and the
# last line the totals. A skipped test is named with its reason and checked against tests/expected-skips.txt
# (scripts/skips.sh): one not declared for this run's environment (E2E_TARGET, E2E_FILE_STORE) fails the script.
# Exit status: non-zero when any step failed or any skip was undeclared.
#
# Environment knobs:
#   E2E_TARGETS="worker native"  which HTTP servers to test (default both)
#   E2E_READY_TIMEOUT=<seconds>  how long to wait for a server (default 60)
#   (a step left out with an E2E_SKIP_… knob below is said so in the output; it is the caller's choice, not a skip)
#   E2E_SKIP_CONFORMANCE=1       skip the conformance suite
#   E2E_SKIP_OAUTH2=1            skip the oauth2 crate client
#   E2E_SKIP_STDIO=1             skip the stdio client tests
#   E2E_SKIP_CLI=1               skip the `zotero-mcp e2e` runs
#   E2E_SKIP_ZOTERO_STORAGE=1    skip the second pass of the file suites (attachments, sources, semantic) with
#                                the files on Zotero Storage
#   E2E_TEST_FILES="a b"         run only these test files (default tests/e2e/*.test.mjs)
#   E2E_LARGE_LIBRARY=<items>    the synthetic group's size (default 20000; mirror-scale.test.mjs needs 20,000 or more)
#   E2E_KEEP_LOG=1               keep the server logs (their paths are printed)
#   E2E_NO_CHROMIUM=1            declares that this machine has no Chromium: the panels' browser tests
#                                (tests/e2e/apps.test.mjs) skip as tests/expected-skips.txt allows; CHROMIUM_PATH
#                                names another Chromium or Chrome than /usr/bin/chromium
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SHIM="build/worker/shim.mjs"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
READY_TIMEOUT="${E2E_READY_TIMEOUT:-60}"
export READY_TIMEOUT
TARGETS="${E2E_TARGETS:-worker native}"

die() {
  echo "e2e: $*" >&2
  exit 1
}

[ -f "$CONFIG" ] || die "$CONFIG is missing"
[ -x "$WRANGLER" ] || die "$WRANGLER is missing: run npm ci (or scripts/setup.sh) first"
command -v node >/dev/null || die "node is not on PATH"
case " $TARGETS " in *" worker "*) [ -f "$SHIM" ] || die "$SHIM is missing: run make build first" ;; esac


. scripts/servers.sh
. scripts/skips.sh
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-e2e.XXXXXX")"
PIDS=()
LOGS=()


cleanup() {
  local rc=$?
  trap - EXIT
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  # wrangler bundles into <config dir>/.wrangler/tmp/<run> and removes <run>; drop the empty shell.
  rmdir tests/e2e/.wrangler/tmp tests/e2e/.wrangler 2>/dev/null || true
  if [ "$rc" -ne 0 ]; then
    for log in "${LOGS[@]}"; do
      [ -s "$log" ] || continue
      echo "--- last 60 lines of $log ---" >&2
      tail -n 60 "$log" >&2 || true
    done
  fi
  if [ "${E2E_KEEP_LOG:-}" = "1" ]; then
    echo "e2e: logs kept in $WORK_DIR" >&2
  else
    rm -rf "$WORK_DIR"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The servers' Zotero is the simulator with the demo library, on loopback; every process started here stops
# by itself after 30 minutes at the latest, even if this script is killed before its cleanup runs.
cargo build --quiet --locked -p zotero-sim --bin zotero-sim --bin zotero-sim-files -p zotero-mcp-cli --bin zotero-mcp
SIM_LOG="$WORK_DIR/zotero-sim.log"
LOGS+=("$SIM_LOG")
# Beside the demo, a synthetic group of E2E_LARGE_LIBRARY items (default 20,000) for the library mirror's
# whole-library answers (tests/e2e/mirror-scale.test.mjs), and the feeds group for the bibliography feeds
# (tests/e2e/feeds.test.mjs).
start_sim "$SIM_LOG" --synthetic-group "${E2E_LARGE_LIBRARY:-20000}" --feeds-group || die "zotero-sim did not start"
PIDS+=("$SIM_PID")
echo "e2e: zotero-sim (demo library, a synthetic group of ${E2E_LARGE_LIBRARY:-20000} items, the feeds group) on $SIM_URL"
export SIM_URL
WEBDAV_LOG="$WORK_DIR/webdav.log"
LOGS+=("$WEBDAV_LOG")
start_webdav "$WEBDAV_LOG" || die "the WebDAV server (Apache mod_dav) did not start; run scripts/setup.sh"
PIDS+=("$WEBDAV_PID")
echo "e2e: WebDAV (Apache mod_dav, the demo library's files) on $WEBDAV_URL"
SOURCES_LOG="$WORK_DIR/sources-stub.log"
LOGS+=("$SOURCES_LOG")
start_sources "$SOURCES_LOG" || die "the metadata services' stand-in did not start"
PIDS+=("$SOURCES_PID")
echo "e2e: CrossRef/DataCite/arXiv/Open Library/PubMed/OpenAlex stand-in (recorded answers) on $SOURCES_TEST_BASE_URL"
ZOTERO_MCP_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/zotero-mcp"
export ZOTERO_MCP_BIN

if [ -n "${E2E_TEST_FILES:-}" ]; then
  # shellcheck disable=SC2206  # word splitting of the list is intended
  TEST_FILES=($E2E_TEST_FILES)
else
  TEST_FILES=(tests/e2e/*.test.mjs)
fi

RCS=()
TOTAL_PASS=0
TOTAL_FAIL=0
TOTAL_SKIP=0
TOTAL_UNDECLARED=0
# "N passed" figures from a log (empty when the log does not exist, e.g. a step left out).
count() { [ -f "$2" ] && sed -n "s/$1/\1/p" "$2" | tail -n 1 || true; }

# The skipped tests in node --test logs ($2…) of the run named $1: each printed, checked against
# tests/expected-skips.txt for this run's environment, and added to the totals; RUN_SKIPPED is how many. A
# skipped test whose name cannot be read off the log (node's count and the named ones differ) counts as undeclared.
check_node_skips() {
  local run="$1" list="$WORK_DIR/$1-skips" log said reported=0
  shift
  : >"$list"
  for log in "$@"; do
    [ -f "$log" ] || continue
    node_skips "$log" >>"$list"
    said=$(count '^ℹ skipped \([0-9]*\)$' "$log")
    reported=$((reported + ${said:-0}))
  done
  check_skips e2e "$list" 2>&1
  if [ "$SKIPPED" -ne "$reported" ]; then
    echo "e2e[$run]: node reported $reported skipped tests and $SKIPPED were named in its output; counted as undeclared" >&2
    UNDECLARED=$((UNDECLARED + 1))
    [ "$reported" -gt "$SKIPPED" ] && SKIPPED=$reported
  fi
  RUN_SKIPPED=$SKIPPED
  TOTAL_SKIP=$((TOTAL_SKIP + SKIPPED))
  TOTAL_UNDECLARED=$((TOTAL_UNDECLARED + UNDECLARED))
}

# `zotero-mcp e2e` against one running server ($2 is its /mcp URL; the command takes the origin, as
# `make deploy` gives it the domain): three runs, each an "ok"/"not ok" line. Read-only, signing in itself
# (read scope) with the test password; --write with a token from `zotero-mcp get-token`; --write again with a 500
# from Zotero injected into the highlight's write, which must exit 1 naming that step and still delete the scratch
# item and its attachment (tests/e2e/cli-e2e-check.mjs asks the simulator and WebDAV). Non-zero when any failed.
run_cli_e2e() {
  local target="$1" base="${2%/mcp}" rc failures=0 token verdict out="$WORK_DIR/$target-cli"
  echo "e2e[$target]: zotero-mcp e2e $base (read-only, signing in)"
  ZOTERO_MCP_PASSWORD=test-password "$ZOTERO_MCP_BIN" e2e "$base" </dev/null
  rc=$?
  if [ "$rc" -eq 0 ]; then echo "cli: ok - read-only run"; else echo "cli: not ok - read-only run exited $rc"; failures=$((failures + 1)); fi

  echo "e2e[$target]: zotero-mcp e2e $base --token … --write"
  token="$(ZOTERO_MCP_PASSWORD=test-password "$ZOTERO_MCP_BIN" get-token "$base" </dev/null 2>/dev/null)"
  "$ZOTERO_MCP_BIN" e2e "$base" --token "$token" --write </dev/null
  rc=$?
  if [ "$rc" -eq 0 ]; then echo "cli: ok - --write run"; else echo "cli: not ok - --write run exited $rc"; failures=$((failures + 1)); fi

  echo "e2e[$target]: zotero-mcp e2e $base --write --json, with Zotero failing the highlight's write (HTTP 500)"
  sim_fail '{"method":"POST","pathContains":"/items","bodyContains":"\"annotationType\"","status":500,"times":1}'
  ZOTERO_MCP_PASSWORD=test-password "$ZOTERO_MCP_BIN" e2e "$base" --write --json </dev/null >"$out-fault.json"
  rc=$?
  sim_clear
  cat "$out-fault.json"
  verdict="$(node tests/e2e/cli-e2e-check.mjs "$rc" "$out-fault.json" "write: highlight" 2>&1)"
  echo "cli: $verdict"
  case "$verdict" in "ok - "*) ;; *) failures=$((failures + 1)) ;; esac
  [ "$failures" -eq 0 ]
}

# The whole HTTP suite against one running server.
run_suite() {
  local target="$1" url="$2" rc
  MCP_URL="$url"
  E2E_TARGET="$target"
  export MCP_URL E2E_TARGET
  set +e
  node --test --test-reporter=spec --test-timeout=300000 "${TEST_FILES[@]}" 2>&1 | tee "$WORK_DIR/$target-node.log"
  rc=${PIPESTATUS[0]}; RCS+=("$rc"); echo "e2e[$target]: node tests exit $rc"
  if [ "$target" = worker ]; then
    # The Worker's JavaScript entry, after the rest of the suite: its trap replaces the wasm instance.
    node --test --test-reporter=spec --test-timeout=300000 tests/e2e/worker-entry/*.test.mjs 2>&1 \
      | tee "$WORK_DIR/$target-entry.log"
    rc=${PIPESTATUS[0]}; RCS+=("$rc"); echo "e2e[$target]: worker entry exit $rc"
  fi
  if [ "${E2E_SKIP_OAUTH2:-}" != "1" ]; then
    echo "e2e[$target]: the oauth2 crate as OAuth client (crates/cli/tests/get_token_flow.rs)"
    ZOTERO_MCP_PASSWORD=test-password cargo test --locked --quiet -p zotero-mcp-cli --test get_token_flow -- --ignored 2>&1 \
      | tee "$WORK_DIR/$target-oauth2.log"
    rc=${PIPESTATUS[0]}; RCS+=("$rc"); echo "e2e[$target]: oauth2 client exit $rc"
  else
    echo "e2e[$target]: the oauth2 client left out (E2E_SKIP_OAUTH2=1)"
  fi
  if [ "${E2E_SKIP_CONFORMANCE:-}" != "1" ]; then
    scripts/conformance.sh "$url" 2>&1 | tee "$WORK_DIR/$target-conformance.log"
    rc=${PIPESTATUS[0]}; RCS+=("$rc"); echo "e2e[$target]: conformance exit $rc"
  else
    echo "e2e[$target]: conformance left out (E2E_SKIP_CONFORMANCE=1)"
  fi
  if [ "${E2E_SKIP_CLI:-}" != "1" ]; then
    run_cli_e2e "$target" "$url" 2>&1 | tee "$WORK_DIR/$target-cli.log"
    rc=${PIPESTATUS[0]}; RCS+=("$rc"); echo "e2e[$target]: zotero-mcp e2e exit $rc"
  else
    echo "e2e[$target]: zotero-mcp e2e left out (E2E_SKIP_CLI=1)"
  fi
  set -e
  local np nf op of cp cf xp xf
  np=$(count '^ℹ pass \([0-9]*\)$' "$WORK_DIR/$target-node.log"); nf=$(count '^ℹ fail \([0-9]*\)$' "$WORK_DIR/$target-node.log")
  xp=$(count '^ℹ pass \([0-9]*\)$' "$WORK_DIR/$target-entry.log"); xf=$(count '^ℹ fail \([0-9]*\)$' "$WORK_DIR/$target-entry.log")
  op=$(count '^test result: .* \([0-9]*\) passed.*' "$WORK_DIR/$target-oauth2.log")
  of=$(count '^test result: .* [0-9]* passed; \([0-9]*\) failed.*' "$WORK_DIR/$target-oauth2.log")
  cp=$(count '.*conformance summary: \([0-9]*\) passed.*' "$WORK_DIR/$target-conformance.log")
  cf=$(count '.*conformance summary: [0-9]* passed, \([0-9]*\) failed.*' "$WORK_DIR/$target-conformance.log")
  local ep ef
  ep=$(grep -c '^cli: ok - ' "$WORK_DIR/$target-cli.log" 2>/dev/null || true)
  ef=$(grep -c '^cli: not ok - ' "$WORK_DIR/$target-cli.log" 2>/dev/null || true)
  local pass=$(( ${np:-0} + ${xp:-0} + ${op:-0} + ${cp:-0} + ${ep:-0} ))
  local fail=$(( ${nf:-0} + ${xf:-0} + ${of:-0} + ${cf:-0} + ${ef:-0} ))
  check_node_skips "$target" "$WORK_DIR/$target-node.log" "$WORK_DIR/$target-entry.log"
  echo "e2e[$target]: $pass passed, $fail failed, $RUN_SKIPPED skipped"
  TOTAL_PASS=$((TOTAL_PASS + pass)); TOTAL_FAIL=$((TOTAL_FAIL + fail))
}

for target in $TARGETS; do
  port="$(free_port)"
  [[ "$port" =~ ^[0-9]+$ ]] || die "could not pick a free port (got '$port')"
  log="$WORK_DIR/$target.log"
  LOGS+=("$log")
  case "$target" in
    worker) echo "e2e[worker]: starting wrangler dev on 127.0.0.1:$port (log: $log)"; start_worker "$port" "$log" ;;
    native) echo "e2e[native]: starting zotero-mcp serve --http on 127.0.0.1:$port (log: $log)"; start_native "$port" "$log" ;;
    *) die "unknown target '$target' in E2E_TARGETS (worker, native)" ;;
  esac
  PIDS+=("$SERVER_PID")
  url="http://127.0.0.1:$port/mcp"
  wait_ready "$SERVER_PID" "$url" || die "the $target server is not answering (see its log below)"
  echo "e2e[$target]: answering at $url"
  run_suite "$target" "$url"
  stop_pid "$SERVER_PID"
done

# The suites that touch files again, with the files on Zotero Storage: a second simulator serving the demo
# library's files from its storage origin (its own loopback port, refusing any request that carries the API key),
# and each server set to FILE_STORAGE=zotero. Reading, writing, highlighting, renaming and deleting
# (attachments), an import with its open-access PDF (sources), the index sync's paper text (semantic), and the
# cited papers' passages a reference check reads (check-references).
ZS_FILES=()
for file in tests/e2e/attachments.test.mjs tests/e2e/sources.test.mjs tests/e2e/semantic.test.mjs \
  tests/e2e/check-references.test.mjs; do
  [[ " ${TEST_FILES[*]} " == *" $file "* ]] && ZS_FILES+=("$file")
done
if [ "${E2E_SKIP_ZOTERO_STORAGE:-}" != "1" ] && [ "${#ZS_FILES[@]}" -gt 0 ]; then
  main_sim="$SIM_URL"
  ZS_LOG="$WORK_DIR/zotero-sim-storage.log"
  LOGS+=("$ZS_LOG")
  start_sim "$ZS_LOG" --storage-listen "127.0.0.1:$(free_port)" --demo-files-on-zotero-storage ||
    die "zotero-sim with Zotero Storage did not start"
  PIDS+=("$SIM_PID")
  echo "e2e: zotero-sim with the demo files on its Zotero Storage on $SIM_URL"
  export FILE_STORAGE=zotero E2E_FILE_STORE=zotero
  for target in $TARGETS; do
    port="$(free_port)"
    log="$WORK_DIR/$target-zotero-storage.log"
    LOGS+=("$log")
    case "$target" in
      worker) start_worker "$port" "$log" ;;
      native) start_native "$port" "$log" ;;
    esac
    PIDS+=("$SERVER_PID")
    url="http://127.0.0.1:$port/mcp"
    wait_ready "$SERVER_PID" "$url" || die "the $target server (FILE_STORAGE=zotero) is not answering"
    echo "e2e[$target, Zotero Storage]: answering at $url"
    MCP_URL="$url" E2E_TARGET="$target"
    export MCP_URL E2E_TARGET
    set +e
    node --test --test-reporter=spec --test-timeout=300000 "${ZS_FILES[@]}" 2>&1 \
      | tee "$WORK_DIR/$target-zs-node.log"
    rc=${PIPESTATUS[0]}; RCS+=("$rc")
    set -e
    zp=$(count '^ℹ pass \([0-9]*\)$' "$WORK_DIR/$target-zs-node.log"); zf=$(count '^ℹ fail \([0-9]*\)$' "$WORK_DIR/$target-zs-node.log")
    check_node_skips "$target-zs" "$WORK_DIR/$target-zs-node.log"
    echo "e2e[$target, Zotero Storage]: ${zp:-0} passed, ${zf:-0} failed, $RUN_SKIPPED skipped"
    TOTAL_PASS=$((TOTAL_PASS + ${zp:-0})); TOTAL_FAIL=$((TOTAL_FAIL + ${zf:-0}))
    stop_pid "$SERVER_PID"
  done
  unset FILE_STORAGE E2E_FILE_STORE
  SIM_URL="$main_sim"
fi

if [ "${E2E_SKIP_STDIO:-}" != "1" ]; then
  echo "e2e[stdio]: zotero-mcp serve --stdio with the official clients' stdio transports"
  # Zotero Desktop for `serve --stdio --local`: the simulator's local-API mode as Zotero 10 and as Zotero 7, each
  # with a data directory in Zotero's layout, and one whose local API is switched off (docs/simulator.md).
  web_sim="$SIM_URL"
  for flavour in 10 7; do
    mkdir -p "$WORK_DIR/zotero$flavour"
    start_sim "$WORK_DIR/sim-local$flavour.log" --local-api "$flavour" --local-data-dir "$WORK_DIR/zotero$flavour"
    PIDS+=("$SIM_PID")
    export "LOCAL${flavour}_URL=$SIM_URL" "LOCAL${flavour}_DATA=$WORK_DIR/zotero$flavour"
  done
  start_sim "$WORK_DIR/sim-local-off.log" --local-api 7 --local-api-disabled
  PIDS+=("$SIM_PID")
  # The linked file each data directory has outside storage/ (zotero_sim::local::LINKED_KEY and LINKED_PHRASE).
  export LOCAL_OFF_URL="$SIM_URL" LOCAL_LINKED_KEY=LNKDFILE LOCAL_LINKED_PHRASE="marginalia kept beside the library"
  SIM_URL="$web_sim"
  set +e
  node --test --test-reporter=spec --test-timeout=300000 tests/e2e/stdio/*.test.mjs 2>&1 | tee "$WORK_DIR/stdio-node.log"
  rc=${PIPESTATUS[0]}; RCS+=("$rc")
  .venv/bin/python tests/e2e/stdio/python_client.py 2>&1 | tee "$WORK_DIR/stdio-python.log"
  rc=${PIPESTATUS[0]}; RCS+=("$rc")
  set -e
  sp=$(count '^ℹ pass \([0-9]*\)$' "$WORK_DIR/stdio-node.log"); sf=$(count '^ℹ fail \([0-9]*\)$' "$WORK_DIR/stdio-node.log")
  pp=$(grep -c '^ok - ' "$WORK_DIR/stdio-python.log" || true); pf=$(grep -c '^not ok - ' "$WORK_DIR/stdio-python.log" || true)
  E2E_TARGET=stdio check_node_skips stdio "$WORK_DIR/stdio-node.log"
  echo "e2e[stdio]: $(( ${sp:-0} + pp )) passed, $(( ${sf:-0} + pf )) failed, $RUN_SKIPPED skipped"
  TOTAL_PASS=$((TOTAL_PASS + ${sp:-0} + pp)); TOTAL_FAIL=$((TOTAL_FAIL + ${sf:-0} + pf))
else
  echo "e2e[stdio]: the stdio clients left out (E2E_SKIP_STDIO=1)"
fi

# One closing line with the totals, in the plain "N passed, N failed, N skipped" form.
echo "e2e: $TOTAL_PASS passed, $TOTAL_FAIL failed, $TOTAL_SKIP skipped"
for rc in "${RCS[@]}"; do
  if [ "$rc" -ne 0 ]; then
    exit "$rc"
  fi
done
if [ "$TOTAL_UNDECLARED" -ne 0 ]; then
  echo "e2e: $TOTAL_UNDECLARED skip(s) not declared for their environment in tests/expected-skips.txt (listed above)" >&2
  exit 1
fi

# Shared by scripts/e2e.sh and scripts/bench-runtimes.sh: start and stop the servers under test.
# Sourced, not run. Expects ROOT, WORK_DIR, CONFIG, WRANGLER, SIM_URL and ZOTERO_MCP_BIN to be set by the caller;
# start_* leave the new process's pid in SERVER_PID. Every server stops by itself after 30 minutes at the latest.

# A free port on 127.0.0.1: bind port 0, read what the kernel picked, release it.
free_port() {
  node -e '
    const s = require("node:net").createServer();
    s.listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); });
  '
}

# Stops a server: TERM, up to 10 s for it to go, then KILL.
stop_pid() {
  local pid="$1"
  if kill -0 "$pid" 2>/dev/null; then
    # wrangler forwards TERM to its CLI child, which stops workerd.
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "pid $pid ignored TERM for 10 s; sending KILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

# The release Worker (build/worker/shim.mjs) under `wrangler dev`, with throw-away local KV. WRANGLER_LOG_LEVEL
# (default info: a line per request, which the e2e logs want) is wrangler's own log level.
start_worker() {
  local port="$1" log="$2"
  WEBDAV_VARS=()
  if [ -n "${WEBDAV_URL:-}" ]; then
    WEBDAV_VARS=(--var "WEBDAV_URL:$WEBDAV_URL" --var "WEBDAV_USERNAME:$WEBDAV_USERNAME"
      --var "WEBDAV_PASSWORD:$WEBDAV_PASSWORD")
  fi
  if [ -n "${SOURCES_TEST_BASE_URL:-}" ]; then
    WEBDAV_VARS+=(--var "SOURCES_TEST_BASE_URL:$SOURCES_TEST_BASE_URL")
  fi
  # FILE_STORAGE=zotero: the files on the simulator's Zotero Storage (the native server reads it from the
  # environment it inherits).
  if [ -n "${FILE_STORAGE:-}" ]; then
    WEBDAV_VARS+=(--var "FILE_STORAGE:$FILE_STORAGE")
  fi
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
      --port "$port" \
      --persist-to "$WORK_DIR/state" \
      --show-interactive-dev-session=false \
      --test-scheduled \
      --var "ZOTERO_API_BASE:$SIM_URL" --var ZOTERO_API_KEY:demo --var ZOTERO_LIBRARY_ID:1234567 --var UNLIMITED_REGISTRATION:1 \
      "${WEBDAV_VARS[@]}" \
      --log-level "${WRANGLER_LOG_LEVEL:-info}"
  ) </dev/null >"$log" 2>&1 &
  SERVER_PID=$!
}

# The native server gets the [vars] of the Worker's test config, as environment variables.
start_native() {
  local port="$1" log="$2"
  (
    while IFS='=' read -r name value; do
      name="$(echo "$name" | tr -d ' ')"
      value="$(echo "$value" | sed 's/^ *"//; s/" *$//')"
      export "$name=$value"
    done < <(sed -n '/^\[vars\]/,/^\[/p' "$CONFIG" | grep -E '^[A-Z_]+ *=')
    export ZOTERO_API_BASE="$SIM_URL" ZOTERO_API_KEY=demo ZOTERO_LIBRARY_ID=1234567 UNLIMITED_REGISTRATION=1
    export ZOTERO_MCP_DATA_DIR="$WORK_DIR/native-data"
    exec "$ZOTERO_MCP_BIN" serve --http "127.0.0.1:$port" --exit-after 1800
  ) </dev/null >"$log" 2>&1 &
  SERVER_PID=$!
}

# Ready = POST /mcp gets any HTTP answer from the server (not a proxy 502/503/504).
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
  ' "$1"
}

# Waits until the server at $2 (pid $1) answers, or fails after READY_TIMEOUT seconds (default 60).
wait_ready() {
  local pid="$1" url="$2" deadline=$((SECONDS + ${READY_TIMEOUT:-60}))
  until probe "$url"; do
    kill -0 "$pid" 2>/dev/null || { echo "the server at $url exited before it answered" >&2; return 1; }
    [ "$SECONDS" -lt "$deadline" ] || { echo "the server at $url did not answer within ${READY_TIMEOUT:-60}s" >&2; return 1; }
    sleep 0.5
  done
}

# Waits (up to 10 s) until the process $1 writes "listening" to its log $2; fails, showing the log, if it exits
# first. $3 names it in that message.
wait_listening() {
  local pid="$1" log="$2" name="$3"
  for _ in $(seq 1 100); do
    grep -q 'listening' "$log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "$name exited: $(cat "$log")" >&2; return 1; }
    sleep 0.1
  done
  return 0
}

# zotero-sim with the demo library and the demo's two groups on a free loopback port; sets SIM_URL and SIM_PID. --control serves its fault
# injection endpoint (POST /_sim/fail, docs/simulator.md), through which scripts/e2e.sh fails one step of a run.
# More arguments go to zotero-sim (e.g. --storage-listen ADDR --demo-files-on-zotero-storage).
start_sim() {
  local log="$1" port
  port="$(free_port)"
  "${CARGO_TARGET_DIR:-$ROOT/target}/${SIM_PROFILE:-debug}/zotero-sim" --listen "127.0.0.1:$port" --demo --api-key demo \
    --demo-groups --control --exit-after 1800 "${@:2}" >"$log" 2>&1 &
  SIM_PID=$!
  wait_listening "$SIM_PID" "$log" zotero-sim || return 1
  SIM_URL="http://127.0.0.1:$port"
}

# Arms a fault in the simulator (its --control endpoint): $1 is the JSON of POST /_sim/fail, e.g.
# '{"method":"POST","pathContains":"/items","bodyContains":"annotationType","status":500,"times":1}'.
sim_fail() {
  curl -fsS -X POST -H 'content-type: application/json' --data "$1" "$SIM_URL/_sim/fail" >/dev/null
}

# Drops every fault armed in the simulator and not used.
sim_clear() {
  curl -fsS -X DELETE "$SIM_URL/_sim/fail" >/dev/null
}

# A real WebDAV server (Apache httpd with mod_dav, scripts/webdav-server.sh) on loopback, holding the demo
# library's files in Zotero's layout (zotero-sim-files). Exports WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD
# for the servers started after it. Stops by itself after 30 minutes, like the simulator.
start_webdav() {
  local log="$1" port dir="$WORK_DIR/webdav"
  port="$(free_port)"
  "${CARGO_TARGET_DIR:-$ROOT/target}/${SIM_PROFILE:-debug}/zotero-sim-files" "$dir/dav" >/dev/null || return 1
  timeout 1800 bash scripts/webdav-server.sh "$dir" "$port" demo demo-dav-password >"$log" 2>&1 &
  WEBDAV_PID=$!
  for _ in $(seq 1 100); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$WEBDAV_PID" 2>/dev/null || { echo "the WebDAV server exited: $(cat "$log")" >&2; return 1; }
    sleep 0.1
  done
  WEBDAV_URL="http://127.0.0.1:$port/"
  WEBDAV_USERNAME=demo
  WEBDAV_PASSWORD=demo-dav-password
  export WEBDAV_URL WEBDAV_USERNAME WEBDAV_PASSWORD
}

# The metadata services' stand-in (tests/e2e/sources-stub.mjs: recorded real answers) on a free loopback port.
# Exports SOURCES_TEST_BASE_URL for the servers started after it (they honour it only with
# ENABLE_TEST_FIXTURES=1, which the test config sets). Stops by itself after 30 minutes.
start_sources() {
  local log="$1" port
  port="$(free_port)"
  node tests/e2e/sources-stub.mjs "$port" --exit-after 1800 >"$log" 2>&1 &
  SOURCES_PID=$!
  wait_listening "$SOURCES_PID" "$log" "the sources stub" || return 1
  SOURCES_TEST_BASE_URL="http://127.0.0.1:$port"
  export SOURCES_TEST_BASE_URL
}

# The release Worker under `wrangler dev` and the native server, each on a free port and answering: sets
# WORKER_URL and NATIVE_URL (their /mcp) and adds both to PIDS.
start_both_servers() {
  local port
  port="$(free_port)"
  start_worker "$port" "$WORK_DIR/worker.log"
  PIDS+=("$SERVER_PID")
  WORKER_URL="http://127.0.0.1:$port/mcp"
  wait_ready "$SERVER_PID" "$WORKER_URL"
  port="$(free_port)"
  start_native "$port" "$WORK_DIR/native.log"
  PIDS+=("$SERVER_PID")
  NATIVE_URL="http://127.0.0.1:$port/mcp"
  wait_ready "$SERVER_PID" "$NATIVE_URL"
}

# The start of every bench script: a work dir removed on exit with every server in PIDS stopped (and the empty
# .wrangler shells wrangler leaves in tests/e2e), the release simulator and native binary built, the simulator
# started (SIM_URL, ZOTERO_MCP_BIN set). $1 names the work dir. Call from the script's top level: the EXIT
# trap is the script's.
bench_prelude() {
  [ -f build/worker/shim.mjs ] || { echo "bench: build/worker/shim.mjs is missing: run make build first" >&2; exit 1; }
  WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-$1.XXXXXX")"
  PIDS=()
  trap bench_cleanup EXIT
  cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim -p zotero-mcp-cli --bin zotero-mcp
  SIM_PROFILE=release start_sim "$WORK_DIR/sim.log"
  PIDS+=("$SIM_PID")
  ZOTERO_MCP_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/zotero-mcp"
}

bench_cleanup() {
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  # wrangler bundles into <config dir>/.wrangler/tmp/<run> and removes <run>; drop the empty shells.
  for dir in tests/e2e tests/bench/floor-worker; do rmdir "$dir/.wrangler/tmp" "$dir/.wrangler" 2>/dev/null || true; done
  rm -rf "$WORK_DIR"
}

# The counting proxy (tests/bench/counting-proxy.mjs) in front of $1, logging to $2, holding each answer $3 ms
# (default 0), stopping after $4 seconds (default 1800); sets PROXY_URL and PROXY_PID once it listens.
start_proxy() {
  local upstream="$1" log="$2"
  node tests/bench/counting-proxy.mjs "$upstream" --exit-after "${4:-1800}" --delay-ms "${3:-0}" >"$log" 2>&1 &
  PROXY_PID=$!
  for _ in $(seq 1 100); do
    grep -q '^listening ' "$log" 2>/dev/null && break
    kill -0 "$PROXY_PID" 2>/dev/null || { echo "counting proxy exited: $(cat "$log")" >&2; return 1; }
    sleep 0.1
  done
  PROXY_URL="$(sed -n 's/^listening //p' "$log" | head -n 1)"
  [ -n "$PROXY_URL" ] || { echo "counting proxy did not start: $(cat "$log")" >&2; return 1; }
}

#!/usr/bin/env bash
# The first request of a fresh isolate, side by side (tests/bench/coldstart.mjs, issue 10).
#
# Starts zotero-sim, then, for every round, the release Worker under a fresh `wrangler dev` (its KV kept between
# rounds, so one OAuth token serves them all), and times the first `initialize` against the warm ones. Needs the
# release Worker (make build).
#
# Environment knobs:
#   COLD_ROUNDS=5        fresh starts per target
#   BENCH_COLD_COMPARE="name=startScript=mcpUrl[=token] ..."
#                        more targets, started and stopped the same way, alternating with this Worker. The start
#                        script runs the server in the foreground and prints wrangler's "Ready on" line. Example,
#                        a local copy of the TypeScript cloudflare-zotero-mcp (see scripts/bench-sidebyside.sh):
#                          printf '#!/bin/sh\ncd /path/to/it && exec npx wrangler dev --port 8788 --persist-to state\n' > ts.sh
#                          BENCH_COLD_COMPARE="ts=$PWD/ts.sh=http://127.0.0.1:8788/mcp=TOKEN" bash scripts/bench-coldstart.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
. scripts/servers.sh

bench_prelude coldstart
port="$(free_port)"
# The Worker's start script: start_worker (scripts/servers.sh) in the foreground, its log followed on stdout.
start_script="$WORK_DIR/start-rust.sh"
cat >"$start_script" <<SCRIPT
#!/usr/bin/env bash
set -euo pipefail
cd $(printf '%q' "$ROOT")
ROOT=$(printf '%q' "$ROOT") WORK_DIR=$(printf '%q' "$WORK_DIR") CONFIG=$(printf '%q' "$CONFIG")
SIM_URL=$(printf '%q' "$SIM_URL") WRANGLER=$(printf '%q' "$ROOT/$WRANGLER")
. scripts/servers.sh
log="\$WORK_DIR/rust-\$\$.log"
: >"\$log"
start_worker $port "\$log"
# Its log on stdout until it stops (the bench stops it), 5 minutes at most.
timeout 300 tail -n +1 -f --pid="\$SERVER_PID" "\$log" || kill -TERM "\$SERVER_PID"
SCRIPT
chmod +x "$start_script"

COLD_TARGETS="rust=$start_script=http://127.0.0.1:$port/mcp ${BENCH_COLD_COMPARE:-}" node tests/bench/coldstart.mjs

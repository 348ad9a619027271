#!/usr/bin/env bash
# Serves the already-built release Worker with `wrangler dev` on loopback. Usage: scripts/dev.sh [PORT]
#
# With a ZOTERO_API_KEY in .dev.vars the Worker talks to the real Zotero API. Without one it starts the Zotero
# simulator (zotero-sim) with the demo library on the next port and points the Worker at it, so a fresh checkout
# has something to search. The demo's files are on a local WebDAV server (Apache), or with FILE_STORAGE=zotero in
# .dev.vars, or where Apache is not installed (macOS), on the simulator's Zotero Storage (its storage origin on the
# port after WebDAV's).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
port="${1:-${PORT:-8787}}"
sim_port=$((port + 1))
dav_port=$((port + 2))
storage_port=$((port + 3))

mkdir -p .wrangler
config=.wrangler/dev.wrangler.toml
vars=(--var "ALLOWED_HOSTS:localhost,127.0.0.1,[::1]")
demo=false
if [ -f .dev.vars ] && grep -qE '^ZOTERO_API_KEY=.+' .dev.vars; then
  cp .dev.vars .wrangler/.dev.vars
else
  demo=true
  rm -f .wrangler/.dev.vars
  [ -f .dev.vars ] && cp .dev.vars .wrangler/.dev.vars
fi

# Serve build/ as it is: a config without [build], so wrangler does not rebuild (make dev just built it), and
# without the AI Search binding, which has no local emulation (wrangler would insist on a Cloudflare login).
sed '/^\[build\]/,/^$/d; /^\[\[ai_search_namespaces\]\]/,/^$/d; s#^main = "build/#main = "../build/#; s#^directory = "build/#directory = "../build/#' \
  wrangler.toml >"$config"

# Debian's apache2 with mod_dav, as scripts/webdav-server.sh runs it.
have_apache() { [ -x /usr/sbin/apache2 ] && [ -f /usr/lib/apache2/modules/mod_dav_fs.so ]; }

sim_pid=""
dav_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "$dav_pid" ] && kill "$dav_pid" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

if $demo; then
  sim_bin="${CARGO_TARGET_DIR:-target}/release/zotero-sim"
  [ -x "$sim_bin" ] || echo "[dev] compiling the Zotero simulator for the demo library (about a minute, the first time)"
  # Both binaries at once: the demo's files come from zotero-sim-files (below).
  cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim --bin zotero-sim-files
  sim_args=(--listen "127.0.0.1:${sim_port}" --demo --demo-groups --api-key demo)
  zotero_files=false zotero_files_why="FILE_STORAGE=zotero in .dev.vars"
  if grep -qE '^FILE_STORAGE=["]?zotero["]?[[:space:]]*$' .wrangler/.dev.vars 2>/dev/null; then
    zotero_files=true
  elif ! grep -qE '^WEBDAV_URL=.+' .wrangler/.dev.vars 2>/dev/null && ! have_apache; then
    # No Apache here (macOS, or a Linux without Debian's apache2: scripts/setup.sh installs it only with
    # apt-get): the demo's files come from the simulator's Zotero Storage instead, which needs nothing else.
    zotero_files=true zotero_files_why="Apache httpd is not installed, so no local WebDAV server"
    vars+=(--var FILE_STORAGE:zotero)
  fi
  if $zotero_files; then
    sim_args+=(--storage-listen "127.0.0.1:${storage_port}" --demo-files-on-zotero-storage)
  fi
  "${CARGO_TARGET_DIR:-target}/release/zotero-sim" "${sim_args[@]}" &
  sim_pid=$!
  # The demo library starts afresh with each run, so its local library mirror (D1) does too: one kept from an
  # earlier run would be ahead of the new library's versions (docs/mirror.md).
  rm -rf .wrangler/state/v3/d1
  # In demo mode the Worker must reach the simulator on loopback, which global_fetch_strictly_public forbids.
  sed_in_place 's/^compatibility_flags = \["global_fetch_strictly_public"\]/compatibility_flags = []/' "$config"
  vars+=(--var "ZOTERO_API_BASE:http://127.0.0.1:${sim_port}" --var ZOTERO_API_KEY:demo --var ZOTERO_LIBRARY_ID:1234567)
  if ! grep -qE '^AUTH_PASSWORD=.+' .wrangler/.dev.vars 2>/dev/null; then
    vars+=(--var AUTH_PASSWORD:demo)
  fi
  # Uploads by sourceUrl from a file server on this machine (http://127.0.0.1:…) are allowed in demo mode only.
  # The switch is honoured only with ENABLE_TEST_FIXTURES=1 (which also lists the fixture tools), and only for
  # requests from this machine to its loopback address.
  vars+=(--var ALLOW_LOOPBACK_SOURCE_URLS:1 --var ENABLE_TEST_FIXTURES:1)
  if $zotero_files; then
    echo
    echo "  ${zotero_files_why}: the demo library's PDFs are on the simulator's Zotero Storage"
    echo "  (its storage origin at 127.0.0.1:${storage_port})."
  # The demo library's files, on a real WebDAV server (Apache mod_dav) on loopback, unless .dev.vars names one.
  elif ! grep -qE '^WEBDAV_URL=.+' .wrangler/.dev.vars 2>/dev/null; then
    rm -rf .wrangler/webdav
    "${CARGO_TARGET_DIR:-target}/release/zotero-sim-files" .wrangler/webdav/dav >/dev/null
    # setsid: a process group of its own, so that nothing Apache signals on its way out reaches this script.
    setsid=(); command -v setsid >/dev/null && setsid=(setsid)
    ${setsid[@]+"${setsid[@]}"} bash scripts/webdav-server.sh .wrangler/webdav "$dav_port" demo demo >.wrangler/webdav.log 2>&1 &
    dav_pid=$!
    vars+=(--var "WEBDAV_URL:http://127.0.0.1:${dav_port}/" --var WEBDAV_USERNAME:demo --var WEBDAV_PASSWORD:demo)
    echo
    echo "  No WEBDAV_URL in .dev.vars: the demo library's PDFs are on WebDAV (Apache) at 127.0.0.1:${dav_port}."
  fi
  echo
  echo "  No ZOTERO_API_KEY in .dev.vars: serving the DEMO library from zotero-sim on 127.0.0.1:${sim_port}."
  echo "  (Put your key in .dev.vars to use your own library. Demo login password: demo, unless AUTH_PASSWORD is set.)"
fi

"$WRANGLER" dev --config "$config" --ip 127.0.0.1 --port "$port" --persist-to .wrangler/state \
  "${vars[@]}" --show-interactive-dev-session=false &
wrangler_pid=$!
cleanup_all() {
  kill "$wrangler_pid" 2>/dev/null || true
  cleanup
}
trap cleanup_all EXIT INT TERM

# Wait for the Worker to answer (at most two minutes), then say what to do next.
ready=false
for _ in $(seq 1 240); do
  kill -0 "$wrangler_pid" 2>/dev/null || { echo "dev: wrangler dev stopped before the Worker answered (its output is above)" >&2; exit 1; }
  if node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
    "http://127.0.0.1:${port}/health" 2>/dev/null; then
    ready=true
    break
  fi
  sleep 0.5
done
$ready || { echo "dev: the Worker did not answer on 127.0.0.1:${port} within two minutes (wrangler's output is above)" >&2; exit 1; }

password="the AUTH_PASSWORD in .dev.vars"
if $demo && ! grep -qE '^AUTH_PASSWORD=.+' .wrangler/.dev.vars 2>/dev/null; then password="demo"; fi
took=""
[ -n "${ZOTERO_MCP_MAKE_STARTED:-}" ] && took=" ($(($(date +%s) - ZOTERO_MCP_MAKE_STARTED)) s after make dev started)"
echo
printf '\033[1m  zotero-mcp is ready%s. Next:\033[0m\n' "$took"
echo "  1. The MCP endpoint is http://127.0.0.1:${port}/mcp (a landing page at http://127.0.0.1:${port}/)."
echo "  2. Sign in with the password: ${password}."
echo "  3. Connect Claude Code:  claude mcp add --transport http zotero http://127.0.0.1:${port}/mcp"
echo "     then /mcp in Claude Code to sign in. Other clients: README.md, \"Connect a client\"."
echo "  (Ctrl-C stops the Worker$($demo && echo " and the demo's servers").)"
echo
wait "$wrangler_pid"

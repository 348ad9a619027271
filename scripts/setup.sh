#!/usr/bin/env bash
# Installs everything the build and the tests need, and skips whatever is already in place.
# Safe to run again and again; `make dev` and `make test` run it first.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
# Runs a slow step and says how long it took, so the figures in the README can be checked on any machine.
timed() {
  local started=$SECONDS
  "$@"
  log "  done in $((SECONDS - started)) s"
}
setup_started=$SECONDS

# The exact wasm-bindgen version the workspace pins: the CLI must be that very version (scripts/build.sh runs it).
WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml)

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target (rustup downloads its standard library, once per toolchain)"
  timed rustup target add wasm32-unknown-unknown
fi

for component in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^${component}"; then
    log "adding the ${component} component"
    rustup component add "${component}"
  fi
done

if ! wasm-bindgen --version 2>/dev/null | grep -q "${WASM_BINDGEN_VERSION}"; then
  log "compiling wasm-bindgen-cli ${WASM_BINDGEN_VERSION} from crates.io (about 2 minutes on 2 cores, once per machine)"
  # Not --locked: the registry mirror lags one of its transitive crates.
  timed cargo install wasm-bindgen-cli --version "${WASM_BINDGEN_VERSION}" --force
fi

# npm packages: wrangler (workerd), binaryen's wasm-opt, the MCP clients and the conformance suite.
if [ ! -x node_modules/.bin/wrangler ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages: wrangler, wasm-opt, the MCP clients (about a minute)"
  timed npm ci --no-audit --no-fund
fi
# The official Python MCP SDK, for the stdio client test of the native binary (tests/e2e/stdio/python_client.py).
PY_MCP_VERSION=2.3.0
if ! .venv/bin/python -c "import mcp, sys; sys.exit(0 if __import__('importlib.metadata').metadata.version('mcp') == '${PY_MCP_VERSION}' else 1)" 2>/dev/null; then
  log "installing the Python mcp ${PY_MCP_VERSION} SDK into .venv (under a minute)"
  python3 -m venv .venv
  timed .venv/bin/pip install --quiet --disable-pip-version-check "mcp==${PY_MCP_VERSION}"
fi
# Debian packages, as root or through sudo; the package lists are fetched only when an install needs them.
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q "$@" >/dev/null ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "$@" >/dev/null; }
}
# The real WebDAV server the attachment tests talk to (scripts/webdav-server.sh): Apache httpd with mod_dav.
if [ ! -x /usr/sbin/apache2 ] || [ ! -f /usr/lib/apache2/modules/mod_dav_fs.so ]; then
  log "installing Apache httpd with mod_dav from Debian, the demo's and the tests' WebDAV server (under a minute)"
  timed apt_install apache2
  # Where the package starts the system service, stop it: the tests run their own, on loopback.
  $sudo service apache2 stop >/dev/null 2>&1 || true
fi
# poppler's pdftotext: the reference zotero_retrieve's page numbers are checked against
# (crates/server/tests/tools_retrieve.rs).
if ! command -v pdftotext >/dev/null; then
  log "installing poppler-utils from Debian (pdftotext, the page reference of the retrieval tests)"
  timed apt_install poppler-utils
fi
log "ready ($((SECONDS - setup_started)) s)"

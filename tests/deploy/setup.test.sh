#!/usr/bin/env bash
# Tests scripts/setup.sh's choices per machine without installing anything (`make deploy-test`, part of
# `make test`): which platform it sees through uname, which system packages each purpose takes from which package
# manager, and, run whole on a stand-in macOS and Linux arm64, that `make deploy`'s and `make dev`'s setup never
# reaches for apt-get on a Mac nor installs the test-only packages. Every outside command is a stand-in that
# records its call.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

passed=0 failed=0
ok() { passed=$((passed + 1)); printf '  ok    %s\n' "$1"; }
not_ok() { failed=$((failed + 1)); printf '  FAIL  %s\n' "$1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/        | /' >&2; }

# A directory whose `uname` answers as the given kernel and machine.
fake_uname() {
  local dir="$WORK/uname-$1-$2"
  mkdir -p "$dir"
  # shellcheck disable=SC2016 # the stand-in's own $1, expanded when it runs
  printf '#!/bin/sh\ncase "$1" in -s) echo %s ;; -m) echo %s ;; *) echo %s ;; esac\n' "$1" "$2" "$1" >"$dir/uname"
  chmod +x "$dir/uname"
  echo "$dir"
}

echo "scripts/setup.sh: the platform, from uname"
for case in "Linux x86_64 linux-x64" "Linux aarch64 linux-arm64" "Linux arm64 linux-arm64" "Darwin arm64 macos-arm64" \
  "Darwin x86_64 macos-x64" "FreeBSD amd64 unsupported-FreeBSD-amd64"; do
  # shellcheck disable=SC2086 # split on purpose: kernel, machine, expected platform
  set -- $case
  dir=$(fake_uname "$1" "$2")
  got=$(PATH="$dir:$PATH" bash -c '. "$1"; setup_platform' _ "$ROOT/scripts/setup.sh" 2>&1) || true
  if [ "$got" = "$3" ]; then ok "$1 $2 is $3"; else not_ok "$1 $2 is $3" "got: $got"; fi
done

echo "scripts/setup.sh: system packages per platform and purpose"
# platform purpose apt brew | expected lines, joined by ';'
while IFS='|' read -r args want; do
  # shellcheck disable=SC2086 # split on purpose: the four arguments
  got=$(bash -c '. "$1"; shift; setup_system_packages "$@"' _ "$ROOT/scripts/setup.sh" $args 2>&1 | tr '\n' ';') || true
  if [ "$got" = "$want" ]; then ok "$args: ${want:-nothing}"; else not_ok "$args: ${want:-nothing}" "got: $got"; fi
done <<'EOF'
linux-x64 test yes no|apache2 apt-get apache2 required;pdftotext apt-get poppler-utils required;shellcheck apt-get shellcheck required;
linux-arm64 test yes no|apache2 apt-get apache2 required;pdftotext apt-get poppler-utils required;shellcheck apt-get shellcheck required;
linux-x64 dev yes no|apache2 apt-get apache2 optional;
linux-arm64 dev yes no|apache2 apt-get apache2 optional;
linux-x64 build yes no|
linux-arm64 dev no no|apache2 none apache2 optional;
macos-arm64 build no yes|
macos-arm64 dev no yes|
macos-x64 dev no no|
macos-arm64 test no yes|pdftotext brew poppler required;
macos-x64 test no no|pdftotext none poppler required;
EOF

# The whole script on a stand-in machine: only the given tools on PATH (plus the shell's basics), every one of
# them recording its call in $CALLS. Sets status and OUT.
run_setup() {
  local kernel=$1 arch=$2 purpose=$3; shift 3
  local box="$WORK/box-$kernel-$arch-$purpose"
  rm -rf "$box" && mkdir -p "$box/bin" "$box/repo/scripts" "$box/repo/node_modules/.bin"
  cp "$ROOT/scripts/setup.sh" "$box/repo/scripts/"
  printf '[workspace.dependencies]\nwasm-bindgen = "=0.2.100"\n' >"$box/repo/Cargo.toml"
  : >"$box/repo/package-lock.json"
  : >"$box/repo/node_modules/.bin/wrangler" && chmod +x "$box/repo/node_modules/.bin/wrangler"
  sleep 0.01; : >"$box/repo/node_modules/.package-lock.json"
  local t
  for t in bash sh sed grep cat dirname id mkdir rm tr head chmod; do ln -s "$(command -v "$t")" "$box/bin/$t"; done
  cp "$(fake_uname "$kernel" "$arch")/uname" "$box/bin/uname"
  CALLS="$box/calls.log" OUT="$box/out.log"
  : >"$CALLS"
  stub() { printf '#!/bin/sh\necho "%s $*" >>"%s"\n%s\n' "$1" "$CALLS" "${2:-}" >"$box/bin/$1"; chmod +x "$box/bin/$1"; }
  # shellcheck disable=SC2016 # the stand-ins' own arguments, expanded when they run
  stub rustup 'case "$1 $2" in "target list") echo wasm32-unknown-unknown ;; "component list") printf "rustfmt-x\nclippy-x\n" ;; esac'
  stub node 'echo 22'
  stub npm
  stub cargo
  stub wasm-bindgen 'echo "wasm-bindgen 0.2.100"'
  # python3 -m venv DIR: a venv whose pip records its call too.
  # shellcheck disable=SC2016
  stub python3 'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; printf "#!/bin/sh\necho \"pip \$*\" >>%s\n" "'"$CALLS"'" >"$3/bin/pip"; chmod +x "$3/bin/pip"; fi'
  for t in "$@"; do stub "$t"; done
  status=0
  HOME="$box" PATH="$box/bin" SETUP_APACHE_BIN="$box/no-apache" SETUP_APACHE_MODULES="$box/no-apache" bash "$box/repo/scripts/setup.sh" "$purpose" >"$OUT" 2>&1 || status=$?
}
called() { grep -qE -- "$1" "$CALLS"; }

echo "scripts/setup.sh run whole on stand-in machines"
t="macOS arm64, make deploy (build): no apt-get, no brew, no sudo, ready"
run_setup Darwin arm64 build apt-get brew sudo
if [ "$status" = 0 ] && ! called '^(apt-get|brew|sudo) ' && grep -q "ready for build on macos-arm64" "$OUT"; then ok "$t"
else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

t="macOS x64, make dev: no system package; the demo's files said to come from Zotero Storage"
run_setup Darwin x86_64 dev brew
if [ "$status" = 0 ] && ! called '^(apt-get|brew|sudo) ' && grep -q "ready for dev on macos-x64" "$OUT"; then ok "$t"
else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

t="macOS arm64, make test: poppler from Homebrew, the WebDAV tests' limit said"
run_setup Darwin arm64 test brew
if [ "$status" = 0 ] && called '^brew install poppler$' && ! called '^apt-get' && grep -q "WebDAV tests need Debian's Apache" "$OUT"; then ok "$t"
else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

t="Linux arm64 without apt-get, make dev: carries on without Apache, says so"
run_setup Linux aarch64 dev
if [ "$status" = 0 ] && grep -q "apache2 is not installed (no apt-get)" "$OUT" && grep -q "ready for dev on linux-arm64" "$OUT"; then ok "$t"
else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

t="Linux arm64 with apt-get, make test: apache2, poppler-utils and shellcheck from apt-get"
run_setup Linux aarch64 test apt-get sudo service
if [ "$status" = 0 ] && called 'apt-get install -y -q apache2' && called 'apt-get install -y -q poppler-utils' && called 'apt-get install -y -q shellcheck' && ! called '^brew'; then ok "$t"
else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

t="Linux x64, make build: no apt-get (nothing the build needs comes from it)"
run_setup Linux x86_64 build apt-get sudo
if [ "$status" = 0 ] && ! called '^(apt-get|sudo) '; then ok "$t"; else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

t="no Node.js: stops and says where to get it"
run_setup Linux x86_64 build
rm -f "$WORK/box-Linux-x86_64-build/bin/node"
status=0; HOME="$WORK" PATH="$WORK/box-Linux-x86_64-build/bin" bash "$WORK/box-Linux-x86_64-build/repo/scripts/setup.sh" build >"$OUT" 2>&1 || status=$?
if [ "$status" = 1 ] && grep -q "install Node.js 20 or newer" "$OUT"; then ok "$t"; else not_ok "$t" "$(cat "$OUT")"; fi

# In a sandbox like the others: a script that ignored the argument would otherwise set up this very checkout.
t="an unknown purpose: refused, nothing run"
run_setup Linux x86_64 everything apt-get
if [ "$status" = 1 ] && grep -q "Usage: scripts/setup.sh \[build|dev|test\]" "$OUT" && [ ! -s "$CALLS" ]; then ok "$t"
else not_ok "$t" "$(cat "$OUT" "$CALLS")"; fi

echo "setup tests: $passed passed, $failed failed"
[ "$failed" = 0 ]

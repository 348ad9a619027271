#!/usr/bin/env bash
# Prints where the Worker's wasm bytes are: by crate and by module of our crates, each as an estimated share of
# the deployed gzip size, then the largest constants and the generic functions instantiated most (twiggy monos).
# docs/performance.md ("Bundle size") keeps a table made with it.
#
# It needs a release build (`make build`, or scripts/build.sh, which this runs first and which does nothing when
# build/ is current). The deployed file has no names, so the figures come from the same build read before
# wasm-opt: wasm-bindgen's output (function names kept) for the code, and the linker's map for the constants,
# from linking the release wasm once more with `--Map` (the same wasm, checked). tests/bench/size/breakdown.py
# does the counting and says how a function is given to a crate.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

say() { printf '\033[1m[size-breakdown]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1m[size-breakdown]\033[0m %s\n' "$*" >&2; exit 1; }

command -v python3 >/dev/null || die "python3 is needed to count the bytes."
if ! command -v twiggy >/dev/null; then
  say "installing twiggy (cargo install twiggy --locked, into ~/.cargo/bin)"
  cargo install twiggy --locked
fi

scripts/build.sh >&2
raw="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/zotero_mcp.wasm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

before=$(sha256 "$raw" | cut -d' ' -f1)
say "linking the release wasm again with the linker's map"
# The same command as scripts/build.sh, with one more linker argument: cargo relinks only this package.
WASM_BINDGEN_USE_JS_SYS=1 cargo rustc --lib --release --locked --target wasm32-unknown-unknown -p zotero-mcp \
  --quiet -- -C "link-arg=--Map=$work/map"
[ "$(sha256 "$raw" | cut -d' ' -f1)" = "$before" ] ||
  die "linking with the map gave another wasm than build/ was made from: run scripts/build.sh, then this again."

"$WASM_BINDGEN_BIN" "$raw" --out-dir "$work" --out-name index --target module --no-typescript \
  --experimental-reset-state-function --force-enable-abort-handler
python3 tests/bench/size/breakdown.py "$work/index_bg.wasm" "$raw" "$work/map" build/index_bg.wasm

echo
echo "Generic functions with the most instances (before wasm-opt; raw bytes, names without their type arguments):"
twiggy monos -g -m 20 "$work/index_bg.wasm" | cut -c1-200

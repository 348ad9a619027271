# Sourced by the other scripts: where the build's tools are, and a wrangler that never phones home.
# wasm-opt comes from npm (binaryen's package; Debian's binaryen is too old for current rustc output), the
# wasm-bindgen CLI from `cargo install` (scripts/setup.sh): nothing is downloaded from anywhere else.
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen || true)}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$_root/node_modules/.bin/wasm-opt}"
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true
export WRANGLER="$_root/node_modules/.bin/wrangler"
unset _root

# GNU (Linux) and BSD (macOS) tools differ: macOS has no sha256sum before 15 and its sed needs a suffix after -i.
sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }
# sed -i on the last argument, the same on both: a suffix both accept, then the backup removed.
sed_in_place() { local file=${*: -1}; sed -i.sed-bak "$@" && rm -f "$file.sed-bak"; }

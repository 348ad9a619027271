# Sourced by the other scripts: tool locations for worker-build, and a wrangler that never phones home.
# worker-build would otherwise download wasm-bindgen and wasm-opt from GitHub, which these machines cannot reach
# (and Debian's binaryen is too old for current rustc output).
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen || true)}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$_root/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$_root/node_modules/.bin/esbuild}"
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true
export WRANGLER="$_root/node_modules/.bin/wrangler"
unset _root

#!/usr/bin/env bash
# Builds the release Worker into build/ (worker-build: cargo → wasm-bindgen → wasm-opt → esbuild shim).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
worker-build --release
# wasm-bindgen keeps the function-name section (≈120 KiB) for readable stack traces; a deployed Worker does not
# need it. Stripping here rather than with `strip = true` in Cargo keeps the target_features section that
# wasm-bindgen reads to pick its transforms.
"$WASM_OPT_BIN" build/index_bg.wasm --strip-debug --strip-producers -o build/index_bg.wasm

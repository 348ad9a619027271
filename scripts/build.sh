#!/usr/bin/env bash
# Builds the release Worker into build/ (worker-build: cargo → wasm-bindgen → wasm-opt → esbuild shim).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
worker-build --release

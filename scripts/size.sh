#!/usr/bin/env bash
# Prints the size of what `wrangler deploy` would upload (total and gzip), from an offline dry run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The dry run bundles build/worker/shim.mjs with the wasm, exactly as a deploy would; a config without [build]
# keeps it from rebuilding.
sed '/^\[build\]/,/^$/d' wrangler.toml > "$out/wrangler.toml"
sed -i 's#^main = "build/#main = "'"$PWD"'/build/#' "$out/wrangler.toml"
"$WRANGLER" deploy --dry-run --outdir "$out/dist" --config "$out/wrangler.toml" 2>&1 | grep -E 'Total Upload' || true
wasm=build/index_bg.wasm; [ -f "$wasm" ] || wasm=
if [ -n "$wasm" ]; then
  raw=$(wc -c < "$wasm"); gz=$(gzip -9 -c "$wasm" | wc -c)
  printf 'wasm: %s — %d KiB raw, %d KiB gzip\n' "$(basename "$wasm")" $((raw / 1024)) $((gz / 1024))
fi

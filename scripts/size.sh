#!/usr/bin/env bash
# Prints the size of what `wrangler deploy` would upload (total and gzip), from an offline dry run. The figures are
# kept in build/.size with a checksum of what they measured, so an unchanged build prints them without the dry run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
[ -f build/worker/shim.mjs ] || { echo "size: nothing built yet (make build)" >&2; exit 1; }

key=$(cat build/worker/shim.mjs build/index.js build/index_bg.wasm build/snippets/*/* wrangler.toml 2>/dev/null |
  sha256 | cut -d' ' -f1)
if [ -f build/.size ] && [ "$(head -n1 build/.size)" = "$key" ]; then
  tail -n +2 build/.size
  exit 0
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The dry run bundles build/worker/shim.mjs with the glue and the wasm, exactly as a deploy would; a config
# without [build] keeps it from rebuilding.
sed '/^\[build\]/,/^$/d' wrangler.toml > "$out/wrangler.toml"
sed_in_place 's#^main = "build/#main = "'"$PWD"'/build/#' "$out/wrangler.toml"
sed_in_place 's#^directory = "build/#directory = "'"$PWD"'/build/#' "$out/wrangler.toml"
{
  "$WRANGLER" deploy --dry-run --outdir "$out/dist" --config "$out/wrangler.toml" 2>&1 | grep -E 'Total Upload' || true
  wasm=build/index_bg.wasm
  raw=$(wc -c < "$wasm"); gz=$(gzip -9 -c "$wasm" | wc -c)
  printf 'wasm: %s — %d KiB raw, %d KiB gzip\n' "$(basename "$wasm")" $((raw / 1024)) $((gz / 1024))
} > "$out/figures"
cat "$out/figures"
# Kept only when the dry run gave its figure, so a failed one is tried again next time.
if grep -q 'Total Upload' "$out/figures"; then
  { echo "$key"; cat "$out/figures"; } > build/.size
fi

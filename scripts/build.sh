#!/usr/bin/env bash
# Builds the release Worker into build/: cargo (wasm32, release) → wasm-bindgen → wasm-opt → our JavaScript entry
# (src/entry.mjs). wrangler bundles build/worker/shim.mjs with the glue and the wasm when it serves or deploys.
#
# Only what changed is redone: cargo decides for the Rust, and the steps after it run again only when their
# inputs (the wasm cargo wrote, the entry, this script, the tools' versions) differ from the last build's, recorded
# in build/.stamp. With nothing changed this takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }
die() { printf '\033[1m[build]\033[0m %s\n' "$*" >&2; exit 1; }

raw="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/zotero_mcp.wasm"
[ -x "$WASM_BINDGEN_BIN" ] || die "wasm-bindgen is not installed: run 'make setup' (or scripts/setup.sh) first."
[ -x "$WASM_OPT_BIN" ] || die "wasm-opt is not installed (node_modules/.bin/wasm-opt): run 'make setup' first."

if [ ! -f "$raw" ]; then
  say "compiling the Worker to wasm (release, size-optimized with LTO): several minutes the first time"
fi
started=$SECONDS
# WASM_BINDGEN_USE_JS_SYS: wasm-bindgen's macro turns the async entry points into promises through js_sys rather
# than wasm_bindgen_futures (an environment variable because cargo passes no --cfg to host proc-macros).
WASM_BINDGEN_USE_JS_SYS=1 cargo build --lib --release --locked --target wasm32-unknown-unknown -p zotero-mcp
compiled=$((SECONDS - started))

stamp=$(
  sha256 "$raw" src/entry.mjs scripts/build.sh | cut -d' ' -f1
  "$WASM_BINDGEN_BIN" --version
  "$WASM_OPT_BIN" --version
)
if [ -f build/.stamp ] && [ "$(cat build/.stamp)" = "$stamp" ] &&
  [ -f build/index.js ] && [ -f build/index_bg.wasm ] && [ -f build/worker/shim.mjs ]; then
  say "build/ is up to date (nothing changed since the last build)"
  exit 0
fi

started=$SECONDS
next=build/.next
rm -rf "$next"
mkdir -p "$next/worker"
# --target module: an ES module that imports the wasm itself. The other two flags give the glue what
# src/entry.mjs needs to start a fresh instance after a trap.
"$WASM_BINDGEN_BIN" "$raw" --out-dir "$next" --out-name index --target module --no-typescript \
  --experimental-reset-state-function --force-enable-abort-handler
# wrangler's bundler takes `import name from "….wasm"` (a compiled WebAssembly.Module, as Workers import wasm);
# wasm-bindgen writes the source-phase form of the same import, which it does not parse.
sed_in_place 's/^import source \([A-Za-z0-9_$]* from "\.\/index_bg\.wasm";\)$/import \1/' "$next/index.js"
grep -q '^import [A-Za-z0-9_$]* from "\./index_bg\.wasm";$' "$next/index.js" ||
  die "the glue from wasm-bindgen no longer imports ./index_bg.wasm as this script expects: see scripts/build.sh."

# wasm-opt twice. The first -Oz pass is the usual one. The second takes another ~4 KiB off the gzip size (1172.5
# -> 1168.6 KiB), and with --low-memory-unused (only there: on both passes the result is 0.2 KiB larger) it may
# fold constant offsets, because nothing lives in the lowest 1 KiB of memory: the linker puts the 1 MiB stack
# first, growing down towards 0, so only a stack already deep enough to have wrecked the Worker reaches it
# (1172.5 -> 1166.8 KiB gzip). It also drops the name section (~120 KiB, kept by wasm-bindgen for readable stack
# traces) and the producers section, which a deployed Worker needs neither of. The features are those rustc's
# wasm32 target and wasm-bindgen use, named rather than --all-features so that no newer encoding that workerd
# cannot load is ever emitted.
# -ocimfs=0: a function with one caller is not inlined for that alone (wasm-opt's default inlines it whatever its
# size). Merged into its caller, an async function's body renumbers its locals among hundreds and compresses far
# worse: inlined, the Worker is 2% smaller raw and 6% larger gzip (1366.7 -> 1453.3 KiB). The PDF engine, built the
# same way, runs as fast either way in V8 (docs/performance.md, "Bundle size").
inlining=(--one-caller-inline-max-function-size=0)
features=(--enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory
  --enable-multivalue --enable-reference-types --enable-exception-handling)
"$WASM_OPT_BIN" "$next/index_bg.wasm" -o "$next/index_bg.wasm" "${features[@]}" -Oz "${inlining[@]}"
"$WASM_OPT_BIN" "$next/index_bg.wasm" -o "$next/index_bg.wasm" "${features[@]}" -Oz "${inlining[@]}" \
  --low-memory-unused --strip-debug --strip-producers
cp src/entry.mjs "$next/worker/shim.mjs"

# The MCP Apps panels (docs/apps.md) as Workers static assets, served before the Worker runs and never part of its
# bundle: the files the panels load from this server (pdf.js), and the panels' own files, which the Worker reads
# through its ASSETS binding to answer resources/read. A panel's frame has its own origin (or none), so the files
# say anyone may load them.
mkdir -p "$next/assets/apps/pdfjs" "$next/assets/apps/panels"
cp apps/vendor/pdfjs/pdf.min.mjs apps/vendor/pdfjs/pdf.worker.min.mjs "$next/assets/apps/pdfjs/"
cp apps/panels/*.html apps/panels/*.js apps/panels/*.css "$next/assets/apps/panels/"
cat >"$next/assets/_headers" <<'HEADERS'
/apps/*
  Access-Control-Allow-Origin: *
  Cache-Control: public, max-age=86400
  X-Content-Type-Options: nosniff
HEADERS

# Swap the new files in; build/ may also hold scripts/deploy's configuration, which stays.
rm -rf build/index.js build/index_bg.wasm build/snippets build/worker build/package.json build/assets
mv "$next"/* build/
rmdir "$next"
printf '%s\n' "$stamp" >build/.stamp
say "built build/ in $((compiled + SECONDS - started)) s (cargo ${compiled} s, wasm-bindgen and wasm-opt $((SECONDS - started)) s)"

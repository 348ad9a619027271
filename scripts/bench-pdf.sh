#!/usr/bin/env bash
# `make bench-pdf`: our PDF engine as wasm in Node's V8 beside pdf.js (npm unpdf, what the TypeScript server
# uses), on a corpus of real PDFs, scored against poppler's pdftotext. Prints per-file figures and the goals
# table of docs/pdf.md. Figures, not tests: it exits non-zero only when it cannot run, or when our engine crashes.
#
#   PDF_CORPUS  the corpus (files/, adversarial/, tools/ from the benchmark material); default ../shared/data/pdf-corpus
#   PDF_FILES   space-separated file names to run instead of all of them
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CORPUS="$(cd "${PDF_CORPUS:-$ROOT/../shared/data/pdf-corpus}" && pwd)"
WORK="$ROOT/target/bench-pdf"
MODULES="$WORK/modules"
log() { printf '\033[1m[bench-pdf]\033[0m %s\n' "$*" >&2; }

# What the scoring needs: poppler (pdftotext, pdfinfo), rapidfuzz for score.py, unpdf (npm, with setup).
if ! command -v pdftotext >/dev/null; then
  log "installing poppler-utils"
  apt-get install -y -q poppler-utils poppler-data >/dev/null
fi
if ! .venv/bin/python -c 'import rapidfuzz' 2>/dev/null; then
  log "installing rapidfuzz into .venv"
  .venv/bin/pip install --quiet --disable-pip-version-check rapidfuzz
fi

log "building the engine for wasm32 (and the glue-only floor, for the size figure)"
cargo build --release --locked -q --target wasm32-unknown-unknown -p zotero-mcp-core \
  --example pdf_wasm_bench --example pdf_wasm_floor
rm -rf "$WORK/out" "$WORK/results" && mkdir -p "$MODULES" "$WORK/out/ours" "$WORK/out/unpdf" "$WORK/results"
size_line=""
for name in pdf_wasm_bench pdf_wasm_floor; do
  wasm-bindgen --target nodejs --out-dir "$MODULES/$name" "target/wasm32-unknown-unknown/release/examples/$name.wasm"
  # The glue is CommonJS; the repository's package.json says "module".
  echo '{"type":"commonjs"}' >"$MODULES/$name/package.json"
  # Sized as the Worker ships its wasm: wasm-opt -Oz, then gzip.
  node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
    "$MODULES/$name/${name}_bg.wasm" -o "$WORK/$name.opt.wasm"
  size_line+="$name=$(gzip -9c "$WORK/$name.opt.wasm" | wc -c) "
done
echo "$size_line" >"$WORK/results/size.txt"

# The pdf.js baseline runs from the work directory so that it finds unpdf in our node_modules.
# unpdf 1.8 (the version the TypeScript server resolves today) moved destroy() from the document to its loading
# task; the harness predates that, so its copy here closes documents the way that version can.
sed 's/close: async (d) => d.destroy()/close: async (d) => (d.destroy ? d.destroy() : d.loadingTask.destroy())/' \
  "$CORPUS/tools/baseline.mjs" >"$WORK/baseline.mjs"
grep -q 'loadingTask.destroy' "$WORK/baseline.mjs" || { log "baseline.mjs changed; update the close() patch"; exit 1; }
ln -sfn "$ROOT/node_modules" "$WORK/node_modules"
log "reference text from pdftotext"
bash "$CORPUS/tools/ref.sh" "$CORPUS/files" "$WORK" >/dev/null

ENGINE=(node tests/bench/pdf/engine.mjs "$MODULES/pdf_wasm_bench")
BASELINE=(node "$WORK/baseline.mjs" unpdf)
# One process per file and engine; a trap, a crash or ten minutes without an answer is recorded, not fatal.
run() { # run <results file> <name> <command…>
  local out="$1" name="$2" line
  shift 2
  line="$(timeout 600 "$@" 2>/dev/null | tail -n 1)" || true
  [ -n "$line" ] || line='{"status":"crash","message":"no answer (exit, trap or timeout)"}'
  printf '{"name":"%s","r":%s}\n' "$name" "$line" >>"$WORK/results/$out"
}

files=()
if [ -n "${PDF_FILES:-}" ]; then
  for f in $PDF_FILES; do
    if [ -f "$CORPUS/files/$f" ]; then files+=("$CORPUS/files/$f"); else files+=("$CORPUS/adversarial/$f"); fi
  done
else
  files=("$CORPUS"/files/*.pdf "$CORPUS"/adversarial/*.pdf)
fi
for f in "${files[@]}"; do
  name="$(basename "$f" .pdf)"
  log "$name"
  # Interleaved, so that the machine's noise falls on both engines alike.
  run ours.jsonl "$name" "${ENGINE[@]}" full "$f" "$WORK/out/ours/$name.json"
  run unpdf.jsonl "$name" "${BASELINE[@]}" full "$f" "$WORK/out/unpdf/$name.json"
  run gate.jsonl "$name" "${ENGINE[@]}" gate "$f"
  run outline-ours.jsonl "$name" "${ENGINE[@]}" outline "$f"
  run outline-unpdf.jsonl "$name" "${BASELINE[@]}" outline "$f"
  if [ -s "$WORK/out/ref/$name.json" ] && [ "$(dirname "$f")" = "$CORPUS/files" ]; then
    python3 tests/bench/pdf/quotes.py make "$f" "$WORK/out/$name.quotes.json"
    run locate.jsonl "$name" "${ENGINE[@]}" locate "$f" "$WORK/out/$name.quotes.json" "$WORK/out/$name.located.json"
    printf '{"name":"%s","r":%s}\n' "$name" \
      "$(python3 tests/bench/pdf/quotes.py score "$WORK/out/$name.quotes.json" "$WORK/out/$name.located.json" 2>/dev/null || echo null)" \
      >>"$WORK/results/quotes.jsonl"
  fi
done

pgf="$CORPUS/files/pgfmanual.pdf"
if [ -f "$pgf" ] && { [ -z "${PDF_FILES:-}" ] || [[ " $PDF_FILES " == *" pgfmanual.pdf "* ]]; }; then
  log "pages 3-5 of pgfmanual"
  for _ in 1 2 3; do
    run range-ours.jsonl pgfmanual "${ENGINE[@]}" range "$pgf" 3 5
    run range-unpdf.jsonl pgfmanual "${BASELINE[@]}" range "$pgf" 3 5
  done
fi

log "scoring"
PDFBENCH="$WORK" .venv/bin/python "$CORPUS/tools/score.py" ours,unpdf >/dev/null
python3 tests/bench/pdf/report.py "$WORK"

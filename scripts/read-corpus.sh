#!/usr/bin/env bash
# `make read-corpus` (issue 34; not part of `make test`): every PDF of the corpus read through
# zotero_read_attachment page by page, from the first page to the last, as a client continues a long document:
# default arguments, then fromPage = nextFromPage until the answer is no longer truncated
# (crates/server/examples/read_corpus.rs, natively, in release). One line per file: pages, calls, pages read,
# largest answer in characters, time, verdict. Scans without a text layer, and files of adversarial/ refused by a
# limit, count as ok and are shown as refusals. Exits non-zero when any file FAILs.
#
#   PDF_CORPUS  the corpus (files/ and adversarial/, corpus.tsv beside them); default ../shared/data/pdf-corpus
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CORPUS="${PDF_CORPUS:-$ROOT/../shared/data/pdf-corpus}"
log() { printf '\033[1m[read-corpus]\033[0m %s\n' "$*" >&2; }

if [ ! -d "$CORPUS/files" ]; then
  log "no PDF corpus at $CORPUS (expected $CORPUS/files/*.pdf); set PDF_CORPUS to the directory that has files/"
  exit 2
fi
dirs=("$CORPUS/files")
[ -d "$CORPUS/adversarial" ] && dirs+=("$CORPUS/adversarial")

log "building the example (release) and reading ${dirs[*]}"
cargo run --quiet --release --locked -p zotero-mcp-server --example read_corpus -- "${dirs[@]}"

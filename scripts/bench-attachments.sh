#!/usr/bin/env bash
# Reading PDF pages through the Worker and the native server (tests/bench/attachments.mjs), from each file store:
# a ~1 MB and a ~10 MB PDF from the PDF corpus (PDF_CORPUS, default ../shared/data/pdf-corpus: acm-sigconf and
# pgfmanual) under two demo attachments, first on a real WebDAV server (Apache mod_dav), then on the simulator's
# Zotero Storage (uploaded through the native server). Counting proxies (tests/bench/counting-proxy.mjs) in front
# of the Zotero API and of each store say how many requests each read sends. Needs the release Worker
# (make build). Prints two tables; compare within one run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="tests/e2e/wrangler.test.toml"
WRANGLER="node_modules/.bin/wrangler"
CORPUS="${PDF_CORPUS:-$ROOT/../shared/data/pdf-corpus}"
for f in acm-sigconf pgfmanual; do
  if [ ! -f "$CORPUS/files/$f.pdf" ]; then
    echo "bench-attachments: $CORPUS/files/$f.pdf is missing; set PDF_CORPUS to the PDF corpus (skipped)" >&2
    exit 0
  fi
done
. scripts/servers.sh
bench_prelude attachments
cargo build --quiet --locked --release -p zotero-sim --bin zotero-sim-files
SIM_PROFILE=release start_webdav "$WORK_DIR/webdav.log"
PIDS+=("$WEBDAV_PID")

# The demo attachments UN79YVS8 and 3AJKNSWV get the corpus files, zipped as Zotero Desktop would.
put() { # put <key> <pdf> <filename in the item>
  python3 - "$WORK_DIR/webdav/dav/zotero/$1.zip" "$2" "$3" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[2], sys.argv[3])
PY
  [ "$(id -u)" != 0 ] || chown www-data:www-data "$WORK_DIR/webdav/dav/zotero/$1.zip"
}
put UN79YVS8 "$CORPUS/files/acm-sigconf.pdf" "Marchetti et al. - 2022 - Equivariant graph networks for rotamer-free side-chain packing.pdf"
put 3AJKNSWV "$CORPUS/files/pgfmanual.pdf" "Raghunathan et al. - 2023 - Unsupervised contact prediction from the attention maps of protein language models.pdf"

FILES="UN79YVS8=1.0 MB, 6 pages (acm-sigconf);3AJKNSWV=10.2 MB, 1,321 pages (pgfmanual)"
sim="$SIM_URL"

# WebDAV: the servers reach the simulator and Apache through a counting proxy each.
start_proxy "$sim" "$WORK_DIR/api-proxy.log"
PIDS+=("$PROXY_PID")
SIM_URL="$PROXY_URL"
API_PROXY="$PROXY_URL"
start_proxy "$WEBDAV_URL" "$WORK_DIR/dav-proxy.log"
PIDS+=("$PROXY_PID")
WEBDAV_URL="$PROXY_URL/"
start_both_servers
STORE=WebDAV API_PROXY="$API_PROXY" FILES_PROXY="$PROXY_URL" WORKER_URL="$WORKER_URL" NATIVE_URL="$NATIVE_URL" \
  FILES="$FILES" node tests/bench/attachments.mjs
for pid in "${PIDS[@]: -2}"; do stop_pid "$pid"; done

# Zotero Storage: a simulator whose signed URLs name a counting proxy in front of its storage listener.
echo
storage_port="$(free_port)"
start_proxy "http://127.0.0.1:$storage_port" "$WORK_DIR/storage-proxy.log"
PIDS+=("$PROXY_PID")
STORAGE_PROXY="$PROXY_URL"
SIM_PROFILE=release start_sim "$WORK_DIR/sim-storage.log" --storage-listen "127.0.0.1:$storage_port" \
  --storage-origin "$STORAGE_PROXY"
PIDS+=("$SIM_PID")
start_proxy "$SIM_URL" "$WORK_DIR/api-proxy-storage.log"
PIDS+=("$PROXY_PID")
SIM_URL="$PROXY_URL"
export FILE_STORAGE=zotero
start_both_servers
STORE="Zotero Storage" API_PROXY="$PROXY_URL" FILES_PROXY="$STORAGE_PROXY" WORKER_URL="$WORKER_URL" \
  NATIVE_URL="$NATIVE_URL" FILES="$FILES" \
  UPLOAD="UN79YVS8=$CORPUS/files/acm-sigconf.pdf;3AJKNSWV=$CORPUS/files/pgfmanual.pdf" node tests/bench/attachments.mjs

# Beside it, the TypeScript server's engine (pdf.js via unpdf) on the same bytes: the engine alone, no download.
echo
echo "pdf.js (unpdf, the TypeScript server's engine), pages 1–5 of the file in memory, fresh process per file:"
for f in acm-sigconf pgfmanual; do
  printf '  %-12s %s\n' "$f" "$(node tests/bench/pdfjs-range.mjs "$CORPUS/files/$f.pdf" 1 5)"
done

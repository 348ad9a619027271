#!/usr/bin/env bash
# The native tests of the whole workspace (`make unit`): cargo test, then one line with the passed, failed,
# skipped and ignored tests of all the test binaries together. A test that cannot run here records a skip
# (tests/support/skip.rs, through ZOTERO_MCP_SKIP_LOG) instead of passing in silence; a skip that
# tests/expected-skips.txt does not declare for this environment fails the run (scripts/skips.sh).
# Arguments go to cargo test instead of --workspace (e.g. `scripts/unit.sh -p zotero-mcp-core`).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/skips.sh

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-unit.XXXXXX")"
trap 'rm -rf "$WORK_DIR"' EXIT
export ZOTERO_MCP_SKIP_LOG="$WORK_DIR/skips"
: >"$ZOTERO_MCP_SKIP_LOG"

# No arguments: the whole workspace.
if [ "$#" -eq 0 ]; then set -- --workspace; fi
cargo test --locked "$@" 2>&1 | tee "$WORK_DIR/cargo.log"
rc=${PIPESTATUS[0]}

# libtest's line per binary: "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; …".
sum() { sed -n "s/^test result: .* \([0-9]*\) $1;.*/\1/p" "$WORK_DIR/cargo.log" | awk '{ n += $1 } END { print n + 0 }'; }
passed=$(sum passed)
failed=$(sum failed)
ignored=$(sum ignored)
check_skips unit "$ZOTERO_MCP_SKIP_LOG"
# A skipped test returned early, so libtest counted it as passed.
echo "unit: $((passed - SKIPPED)) passed, $failed failed, $SKIPPED skipped, $ignored ignored (#[ignore]: run by scripts/e2e.sh, by another test or by hand)"
if [ "$rc" -ne 0 ]; then exit "$rc"; fi
if [ "$UNDECLARED" -ne 0 ]; then
  echo "unit: $UNDECLARED skip(s) not declared for this environment in tests/expected-skips.txt" >&2
  exit 1
fi

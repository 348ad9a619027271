#!/usr/bin/env bash
# scripts/skips.sh, which decides whether a skipped test fails `make unit` and `make e2e`: skips read off a node
# spec log and a skip log, declared ones passed, undeclared ones (or declared for another environment) counted and
# named. Runs in a second, on made-up logs and declarations; `make unit` runs it first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/zotero-mcp-skips-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
SKIPS_DECLARED="$WORK/expected-skips.txt"
. "$ROOT/scripts/skips.sh"

failures=0
check() {
  if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "not ok - $1: got '$2', expected '$3'"; failures=$((failures + 1)); fi
}

cat >"$SKIPS_DECLARED" <<'DECL'
# suite | test | when | why
unit | needs_root | not-root | made up
e2e | runs on the Worker only | env:E2E_TARGET=native | made up
e2e | a test: with a colon (and parentheses) | always | made up

DECL

# The node spec reporter's lines for skipped tests, with and without a reason, among others.
cat >"$WORK/node.log" <<'LOG'
▶ group
  ✔ passes (0.3ms)
  ﹣ runs on the Worker only (2.75ms) # AI Search is bound only to the Worker
  ﹣ a test: with a colon (and parentheses) (0.2ms) # SKIP
  ﹣ nobody declared this (1.1s) # the machine's name is public
✔ group (6.3ms)
ℹ skipped 3
LOG
node_skips "$WORK/node.log" >"$WORK/node-skips"
check "three skips read off the spec log" "$(wc -l <"$WORK/node-skips" | tr -d ' ')" 3
check "the name and the reason" "$(head -n 1 "$WORK/node-skips")" $'runs on the Worker only\tAI Search is bound only to the Worker'
check "a skip without a reason" "$(sed -n 2p "$WORK/node-skips")" $'a test: with a colon (and parentheses)\tSKIP'

E2E_TARGET=native check_skips e2e "$WORK/node-skips" 2>"$WORK/err" >/dev/null
check "on native: three skipped" "$SKIPPED" 3
check "on native: one undeclared" "$UNDECLARED" 1
check "the undeclared one is named" "$(grep -c 'UNDECLARED SKIP: nobody declared this' "$WORK/err")" 1

E2E_TARGET=worker check_skips e2e "$WORK/node-skips" 2>"$WORK/err" >/dev/null
check "on the Worker the native-only declaration does not hold: two undeclared" "$UNDECLARED" 2

printf 'needs_root\tnot root\n' >"$WORK/unit-skips"
check_skips unit "$WORK/unit-skips" 2>/dev/null >/dev/null
if [ "$(id -u)" -eq 0 ]; then expected=1; else expected=0; fi
check "not-root holds only off root" "$UNDECLARED" "$expected"
check_skips e2e "$WORK/unit-skips" 2>/dev/null >/dev/null
check "a declaration is for its suite only" "$UNDECLARED" 1

: >"$WORK/none"
check_skips unit "$WORK/none"
check "no skips: nothing undeclared" "$SKIPPED/$UNDECLARED" 0/0

if [ "$failures" -ne 0 ]; then
  echo "skips.test.sh: $failures failed" >&2
  exit 1
fi
echo "skips.test.sh: all passed"

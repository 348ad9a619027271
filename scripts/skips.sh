# Skipped tests, counted and checked against tests/expected-skips.txt. Sourced by scripts/unit.sh and
# scripts/e2e.sh (and tests/skips/skips.test.sh), not run.
#
# A skip is a test that did not run here and said why. Each is printed; one that tests/expected-skips.txt does not
# declare for its suite and this environment is an error, so a test that silently stops running fails CI instead
# of looking like a pass. The declaration file has one skip a line, fields separated by " | ":
#   <suite> | <test name, exactly as reported> | <when> | <why>
# <suite> is `unit` (cargo test) or `e2e` (the node suites of scripts/e2e.sh). <when> is the environment in which
# the skip is expected: `always`, `not-root` (the tests run under a uid other than 0), or `env:NAME=value` (the
# variable has that value; e2e.sh sets E2E_TARGET=worker|native and E2E_FILE_STORE=zotero for the second pass).
# Lines starting with # and blank lines are ignored.

SKIPS_DECLARED="${SKIPS_DECLARED:-${ROOT:-.}/tests/expected-skips.txt}"

# Whether the environment condition $1 holds here.
skip_condition_holds() {
  local when="$1" name value
  case "$when" in
    always) return 0 ;;
    not-root) [ "$(id -u)" -ne 0 ] ;;
    env:*=*)
      name="${when#env:}"; value="${name#*=}"; name="${name%%=*}"
      [ "${!name:-}" = "$value" ]
      ;;
    *) echo "skips: unknown condition '$when' in $SKIPS_DECLARED (always, not-root, env:NAME=value)" >&2; return 1 ;;
  esac
}

# Whether tests/expected-skips.txt declares test $2 of suite $1 for this environment.
skip_is_declared() {
  local suite="$1" test="$2" line s t w
  [ -f "$SKIPS_DECLARED" ] || return 1
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in '#'* | '') continue ;; esac
    s="${line%% | *}"; line="${line#* | }"
    t="${line%% | *}"; line="${line#* | }"
    w="${line%% | *}"
    if [ "$s" = "$suite" ] && [ "$t" = "$test" ] && skip_condition_holds "$w"; then return 0; fi
  done <"$SKIPS_DECLARED"
  return 1
}

# Checks the skips listed in file $2 (one a line: "<test name><TAB><reason>") for suite $1: prints each, and
# each undeclared one with what to do. Sets SKIPPED (how many) and UNDECLARED (how many of them undeclared).
check_skips() {
  local suite="$1" list="$2" test reason
  SKIPPED=0
  UNDECLARED=0
  [ -s "$list" ] || return 0
  while IFS=$'\t' read -r test reason || [ -n "$test" ]; do
    [ -n "$test" ] || continue
    SKIPPED=$((SKIPPED + 1))
    if skip_is_declared "$suite" "$test"; then
      echo "$suite: skipped (declared): $test — $reason"
    else
      UNDECLARED=$((UNDECLARED + 1))
      echo "$suite: UNDECLARED SKIP: $test — $reason" >&2
      echo "  make it run here, or declare it for this environment in tests/expected-skips.txt (AGENTS.md, section Checks)" >&2
    fi
  done <"$list"
}

# The skipped tests of a node --test spec-reporter log ($1), as "<test name><TAB><reason>" lines: the spec reporter
# prints a skipped test as "﹣ <name> (<duration>) # <reason>" ("# SKIP" when no reason was given).
node_skips() {
  [ -f "$1" ] || return 0
  sed -n 's/^ *﹣ \(.*\) ([0-9.]*m\{0,1\}s) # \(.*\)$/\1\t\2/p' "$1"
}

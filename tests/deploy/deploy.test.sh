#!/usr/bin/env bash
# Tests scripts/deploy without Cloudflare (`make deploy-test`, part of `make test`).
# Each case runs the real script in a sandbox: a copy of scripts/deploy, scripts/env.sh and wrangler.toml, with
# stand-ins for wrangler (node_modules/.bin/wrangler: a canned `secret list`, every call recorded),
# scripts/build.sh, scripts/size.sh and scripts/e2e-remote (the e2e wrapper, which may not exist in this
# checkout). Last, when build/worker/shim.mjs exists, the script's --dry-run runs the real wrangler on the real
# bundle.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

passed=0 failed=0
ok() { passed=$((passed + 1)); printf '  ok    %s\n' "$1"; }
not_ok() {
  failed=$((failed + 1)); printf '  FAIL  %s\n' "$1"
  printf '        %s\n' "exit: $status" "--- output:" >&2
  sed 's/^/        | /' "$OUT" >&2
  printf '        %s\n' "--- calls:" >&2
  sed 's/^/        | /' "$CALLS" >&2
}

# A fresh sandbox under $WORK/<name>; sets SANDBOX, CALLS (one line per stand-in call) and OUT.
sandbox() {
  SANDBOX="$WORK/$1"
  mkdir -p "$SANDBOX/scripts" "$SANDBOX/node_modules/.bin"
  cp "$ROOT/scripts/deploy" "$ROOT/scripts/env.sh" "$SANDBOX/scripts/"
  cp "$ROOT/wrangler.toml" "$SANDBOX/"
  CALLS="$SANDBOX/calls.log" OUT="$SANDBOX/out.log"
  : >"$CALLS"
  # wrangler: records its arguments; `secret list` prints $STUB_SECRETS (JSON) or fails as $STUB_LIST_FAIL says;
  # `deploy` exits $STUB_DEPLOY_EXIT.
  cat >"$SANDBOX/node_modules/.bin/wrangler" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
echo "wrangler $*" >>"$CALLS"
case "$1 ${2:-}" in
  "secret list")
    case "${STUB_LIST_FAIL:-}" in
      not-found)
        printf '✘ [ERROR] Worker "zotero-mcp" not found.\n\nIf this is a new Worker, run `wrangler deploy` first to create it.\n' >&2
        exit 1 ;;
      auth)
        printf '✘ [ERROR] In a non-interactive environment, it'"'"'s necessary to set a CLOUDFLARE_API_TOKEN environment variable for wrangler to work.\n' >&2
        exit 1 ;;
    esac
    printf '%s\n' "${STUB_SECRETS:-[]}" ;;
  "deploy "*)
    echo "Uploaded zotero-mcp"
    # $STUB_DEPLOY_ERROR: what wrangler prints when the API refuses the deploy.
    [ -z "${STUB_DEPLOY_ERROR:-}" ] || printf '%s\n' "$STUB_DEPLOY_ERROR" >&2
    exit "${STUB_DEPLOY_EXIT:-0}" ;;
  *) echo "stub wrangler: unexpected call: $*" >&2; exit 9 ;;
esac
EOF
  cat >"$SANDBOX/scripts/build.sh" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
echo "build.sh $*" >>"$CALLS"
mkdir -p build/worker && echo 'export default {}' >build/worker/shim.mjs
EOF
  cat >"$SANDBOX/scripts/size.sh" <<'EOF'
#!/usr/bin/env bash
echo "size.sh $*" >>"$CALLS"
EOF
  cat >"$SANDBOX/scripts/e2e-remote" <<'EOF'
#!/usr/bin/env bash
echo "e2e-remote $* password=${ZOTERO_MCP_PASSWORD:-}" >>"$CALLS"
exit "${STUB_E2E_EXIT:-0}"
EOF
  chmod +x "$SANDBOX"/node_modules/.bin/wrangler "$SANDBOX"/scripts/*
}

# Runs the sandbox's scripts/deploy with the given arguments; sets status.
deploy() {
  status=0
  env CALLS="$CALLS" DEPLOY_WAIT_SECONDS=0 WRANGLER='' \
    ${STUB_ENV[@]+"${STUB_ENV[@]}"} bash "$SANDBOX/scripts/deploy" "$@" >"$OUT" 2>&1 || status=$?
}
output_has() { grep -qF -- "$1" "$OUT"; }
called() { grep -qE -- "$1" "$CALLS"; }

ALL='[{"name":"AUTH_PASSWORD","type":"secret_text"},{"name":"WEBDAV_PASSWORD","type":"secret_text"},{"name":"ZOTERO_API_KEY","type":"secret_text"}]'

echo "scripts/deploy (stand-in wrangler, build and e2e)"

t="no domain: refused with the usage, exit 2, nothing run"
sandbox no-domain; STUB_ENV=(); deploy
if [ "$status" = 2 ] && output_has "Usage: scripts/deploy <domain>" && output_has "Which domain?" && [ ! -s "$CALLS" ]; then ok "$t"; else not_ok "$t"; fi

t="empty domain (make deploy without DOMAIN): refused, exit 2"
sandbox empty-domain; STUB_ENV=(); deploy ""
if [ "$status" = 2 ] && output_has "Which domain?" && output_has "make deploy DOMAIN=" && [ ! -s "$CALLS" ]; then ok "$t"; else not_ok "$t"; fi

for bad in "http://zotero.example.org" "https://zotero.example.org/mcp" "zotero.example.org:8443" "localhost" \
  "zotero_mcp.example.org" "zotero-.example.org" "192.168.1.10" "zotero..example.org"; do
  t="not a host name: \"$bad\" refused, exit 2"
  sandbox bad; STUB_ENV=(); deploy "$bad"
  if [ "$status" = 2 ] && output_has "Not a host name" && [ ! -s "$CALLS" ]; then ok "$t"; else not_ok "$t"; fi
done

t="unknown option: refused, exit 2"
sandbox unknown; STUB_ENV=(); deploy zotero.example.org --force
if [ "$status" = 2 ] && output_has "Unknown option: --force" && [ ! -s "$CALLS" ]; then ok "$t"; else not_ok "$t"; fi

t="a missing required secret: refused before building or deploying, the put command printed"
sandbox missing; STUB_ENV=("STUB_SECRETS=[{\"name\":\"ZOTERO_API_KEY\",\"type\":\"secret_text\"}]"); deploy zotero.example.org
if [ "$status" = 1 ] && output_has "npx wrangler secret put AUTH_PASSWORD" && ! output_has "secret put ZOTERO_API_KEY" &&
  called '^wrangler secret list --format json$' && ! called '^wrangler deploy' && ! called '^build.sh' && ! called '^e2e-remote'; then
  ok "$t"; else not_ok "$t"; fi

t="both required secrets missing: both put commands printed"
sandbox missing-both; STUB_ENV=("STUB_SECRETS=[]"); deploy zotero.example.org
if [ "$status" = 1 ] && output_has "npx wrangler secret put ZOTERO_API_KEY" && output_has "npx wrangler secret put AUTH_PASSWORD" &&
  ! called '^wrangler deploy'; then ok "$t"; else not_ok "$t"; fi

t="a first deployment (no Worker yet): explained, put commands printed, nothing deployed"
sandbox first; STUB_ENV=("STUB_LIST_FAIL=not-found"); deploy zotero.example.org
if [ "$status" = 1 ] && output_has "does not exist in this account yet" && output_has "npx wrangler secret put ZOTERO_API_KEY" &&
  output_has "npx wrangler secret put AUTH_PASSWORD" && ! called '^wrangler deploy' && ! called '^build.sh'; then ok "$t"; else not_ok "$t"; fi

t="secret list fails otherwise (not signed in): wrangler's error and how to sign in"
sandbox auth; STUB_ENV=("STUB_LIST_FAIL=auth"); deploy zotero.example.org
if [ "$status" = 1 ] && output_has "CLOUDFLARE_API_TOKEN environment variable" && output_has "npx wrangler login" &&
  ! called '^wrangler deploy'; then ok "$t"; else not_ok "$t"; fi

t="secret list's output not JSON: refused"
sandbox garbage; STUB_ENV=("STUB_SECRETS=Secret Name: ZOTERO_API_KEY"); deploy zotero.example.org
if [ "$status" = 1 ] && output_has "Could not read" && ! called '^wrangler deploy'; then ok "$t"; else not_ok "$t"; fi

t="all secrets present: built, deployed on the domain, then e2e-remote <domain> (read-only); its status is the exit"
sandbox all; STUB_ENV=("STUB_SECRETS=$ALL" "ZOTERO_MCP_PASSWORD=pw"); deploy https://Zotero.Example.org/
deploy_line=$(grep '^wrangler deploy' "$CALLS" || true)
order=$(cut -d' ' -f1-2 "$CALLS" | tr '\n' ',')
if [ "$status" = 0 ] && [ "$order" = "wrangler secret,build.sh ,size.sh ,wrangler deploy,e2e-remote zotero.example.org," ] &&
  [[ $deploy_line == *"--domain zotero.example.org"* ]] && [[ $deploy_line == *"--config build/deploy/wrangler.toml"* ]] &&
  [[ $deploy_line == *"--keep-vars"* ]] && [[ $deploy_line != *"--dry-run"* ]] &&
  called '^e2e-remote zotero.example.org password=pw$' && output_has "  WEBDAV_PASSWORD: set" &&
  output_has "  ZOTERO_LIBRARY_ID: not set (optional)"; then ok "$t"; else not_ok "$t"; fi

t="every command is printed before it runs"
if output_has "+ bash scripts/build.sh" && output_has "deploy --config build/deploy/wrangler.toml --domain zotero.example.org --keep-vars" &&
  output_has "+ scripts/e2e-remote zotero.example.org" && output_has "secret list --format json"; then ok "$t"; else not_ok "$t"; fi

t="the deployed config is wrangler.toml without [build], main pointing at the build"
cfg="$SANDBOX/build/deploy/wrangler.toml"
if [ -f "$cfg" ] && ! grep -q '^\[build\]' "$cfg" && grep -qF "main = \"$SANDBOX/build/worker/shim.mjs\"" "$cfg" &&
  grep -q '^\[\[kv_namespaces\]\]' "$cfg" && grep -q '^\[triggers\]' "$cfg"; then ok "$t"; else not_ok "$t"; fi

t="e2e check fails: deployed, but the exit is the check's"
sandbox e2e-fails; STUB_ENV=("STUB_SECRETS=$ALL" "STUB_E2E_EXIT=1"); deploy zotero.example.org
if [ "$status" = 1 ] && called '^wrangler deploy' && called '^e2e-remote zotero.example.org' && output_has "e2e check failed" &&
  output_has "scripts/e2e-remote zotero.example.org"; then ok "$t"; else not_ok "$t"; fi

t="--write (and DEPLOY_E2E_WRITE=1) pass --write to the e2e check"
sandbox write; STUB_ENV=("STUB_SECRETS=$ALL"); deploy zotero.example.org --write
w1=$(grep '^e2e-remote' "$CALLS" || true)
sandbox write-env; STUB_ENV=("STUB_SECRETS=$ALL" "DEPLOY_E2E_WRITE=1"); deploy zotero.example.org
w2=$(grep '^e2e-remote' "$CALLS" || true)
if [[ $w1 == "e2e-remote zotero.example.org --write "* ]] && [[ $w2 == "e2e-remote zotero.example.org --write "* ]]; then
  ok "$t"; else not_ok "$t"; fi

t="no scripts/e2e-remote in the checkout: deployed, exit 1, what to check by hand"
sandbox no-e2e; rm "$SANDBOX/scripts/e2e-remote"; STUB_ENV=("STUB_SECRETS=$ALL"); deploy zotero.example.org
if [ "$status" = 1 ] && called '^wrangler deploy' && output_has "scripts/e2e-remote is missing" &&
  output_has "https://zotero.example.org/health"; then ok "$t"; else not_ok "$t"; fi

t="--help: the usage, exit 0, nothing run"
sandbox help; STUB_ENV=(); deploy --help
if [ "$status" = 0 ] && output_has "Usage: scripts/deploy <domain>" && output_has "--skip-e2e" && [ ! -s "$CALLS" ]; then
  ok "$t"; else not_ok "$t"; fi

t="--skip-e2e: deployed, no e2e check"
sandbox skip-e2e; STUB_ENV=("STUB_SECRETS=$ALL"); deploy zotero.example.org --skip-e2e
if [ "$status" = 0 ] && called '^wrangler deploy' && ! called '^e2e-remote' && output_has "scripts/e2e-remote zotero.example.org"; then
  ok "$t"; else not_ok "$t"; fi

t="wrangler deploy fails: non-zero, no e2e check"
sandbox deploy-fails; STUB_ENV=("STUB_SECRETS=$ALL" "STUB_DEPLOY_EXIT=1"); deploy zotero.example.org
if [ "$status" = 1 ] && called '^wrangler deploy' && ! called '^e2e-remote' && output_has "wrangler deploy failed"; then
  ok "$t"; else not_ok "$t"; fi

# wrangler 4's words for a domain outside the account's zones (workers-sdk issues 2906 and the custom-domain
# path), and Cloudflare's refusal of a CPU limit on the free plan.
t="the domain's zone is not in the account: said so, with what to do"
sandbox no-zone; STUB_ENV=("STUB_SECRETS=$ALL" "STUB_DEPLOY_EXIT=1"
  "STUB_DEPLOY_ERROR=✘ [ERROR] Could not find zone for \`zotero.example.org\`. Make sure the domain is set up to be proxied by Cloudflare.")
deploy zotero.example.org
if [ "$status" = 1 ] && output_has "is not in a zone of this Cloudflare account" && output_has "Add a" && ! called '^e2e-remote'; then
  ok "$t"; else not_ok "$t"; fi

t="the API's zone_not_found (code 10083): said the same way"
sandbox no-zone-api; STUB_ENV=("STUB_SECRETS=$ALL" "STUB_DEPLOY_EXIT=1"
  "STUB_DEPLOY_ERROR=  workers.api.error.zone_not_found for \"zotero.example.org\" [code: 10083]")
deploy zotero.example.org
if [ "$status" = 1 ] && output_has "is not in a zone of this Cloudflare account"; then ok "$t"; else not_ok "$t"; fi

t="a CPU limit refused on the free plan (100328): what to remove from wrangler.toml"
sandbox cpu-limit; STUB_ENV=("STUB_SECRETS=$ALL" "STUB_DEPLOY_EXIT=1"
  "STUB_DEPLOY_ERROR=✘ [ERROR] A request to the Cloudflare API failed. CPU limits are not supported for the Free plan. [code: 100328]")
deploy zotero.example.org
if [ "$status" = 1 ] && output_has "error 100328" && output_has "Remove the" && output_has "[limits] section" && ! called '^e2e-remote'; then
  ok "$t"; else not_ok "$t"; fi

t="flags after -- go to wrangler deploy"
sandbox passthrough; STUB_ENV=("STUB_SECRETS=$ALL"); deploy zotero.example.org --skip-e2e -- --message "GitHub v1.2.3"
if [ "$status" = 0 ] && called '^wrangler deploy .*--keep-vars --message GitHub v1.2.3$'; then ok "$t"; else not_ok "$t"; fi

t="--skip-build: no build; refused when build/ has no Worker"
sandbox skip-build; STUB_ENV=("STUB_SECRETS=$ALL"); deploy zotero.example.org --skip-build
if [ "$status" = 1 ] && output_has "build/worker/shim.mjs is missing" && ! called '^build.sh' && ! called '^wrangler deploy'; then
  ok "$t"; else not_ok "$t"; fi

t="--dry-run: no secret check, wrangler deploy --dry-run with the domain, no e2e check"
sandbox dry; STUB_ENV=(); deploy zotero.example.org --dry-run
if [ "$status" = 0 ] && ! called '^wrangler secret' && called '^build.sh' &&
  called '^wrangler deploy --config build/deploy/wrangler.toml --domain zotero.example.org --keep-vars --dry-run' &&
  ! called '^e2e-remote'; then ok "$t"; else not_ok "$t"; fi

t="WRANGLER= picks another wrangler"
sandbox override; mv "$SANDBOX/node_modules/.bin/wrangler" "$SANDBOX/other-wrangler"; STUB_ENV=()
status=0
env CALLS="$CALLS" WRANGLER="$SANDBOX/other-wrangler" bash "$SANDBOX/scripts/deploy" zotero.example.org --dry-run >"$OUT" 2>&1 || status=$?
if [ "$status" = 0 ] && called '^wrangler deploy .*--dry-run'; then ok "$t"; else not_ok "$t"; fi

# The real wrangler, offline: bundles the built Worker exactly as a deploy would.
echo "scripts/deploy --dry-run (the real wrangler on build/)"
if [ -f "$ROOT/build/worker/shim.mjs" ] && [ -x "$ROOT/node_modules/.bin/wrangler" ]; then
  t="wrangler deploy --dry-run on the release bundle"
  CALLS=/dev/null OUT="$WORK/real.log"
  status=0
  (cd "$ROOT" && WRANGLER='' bash scripts/deploy zotero.example.org --dry-run --skip-build) >"$OUT" 2>&1 || status=$?
  if [ "$status" = 0 ] && output_has "--dry-run: exiting now." && output_has "Total Upload" && output_has "ATTEMPT_COUNTERS" &&
    output_has "OAUTH_KV" && ls "$ROOT"/build/deploy/dist/*.wasm >/dev/null 2>&1; then
    ok "$t"; grep -F "Total Upload" "$OUT" | sed 's/^/        /'
  else not_ok "$t"; fi
else
  echo "  skip  no build/worker/shim.mjs (run make build first) or no node_modules/.bin/wrangler"
fi

# The free plan refuses any CPU limit (API error 100328): the configuration a deploy sends must set none.
echo "wrangler.toml on the free plan"
t="wrangler.toml sets no [limits] (no cpu_ms)"
CALLS=/dev/null OUT="$WORK/limits.log"
status=0
grep -nE '^[[:space:]]*(\[limits\]|cpu_ms[[:space:]]*=)' "$ROOT/wrangler.toml" >"$OUT" 2>&1 && status=1
if [ "$status" = 0 ]; then ok "$t"; else not_ok "$t"; fi

# The workflow that deploys from a fork: it parses, a manual run takes the domain, and every secret it reads is in
# docs/deployment.md's table (a fork's owner sets exactly those).
echo ".github/workflows/deploy.yml"
CALLS=/dev/null OUT="$WORK/workflow.log"
t="the deploy workflow parses, runs by hand with a domain input, and runs setup and scripts/deploy"
status=0
python3 - "$ROOT/.github/workflows/deploy.yml" >"$OUT" 2>&1 <<'PY' || status=$?
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as true
inputs = on["workflow_dispatch"]["inputs"]
assert "domain" in inputs, "no domain input"
runs = "\n".join(step.get("run", "") for job in doc["jobs"].values() for step in job["steps"])
assert "scripts/setup.sh" in runs and "scripts/deploy" in runs, "setup or scripts/deploy not run"
PY
if [ "$status" = 0 ]; then ok "$t"; else not_ok "$t"; fi

t="every secret the deploy workflow reads is documented in docs/deployment.md"
secrets=$(grep -oE 'secrets\.[A-Z_]+' "$ROOT/.github/workflows/deploy.yml" | sort -u | cut -d. -f2)
section=$(sed -n '/^## Deploying from GitHub Actions/,/^## /p' "$ROOT/docs/deployment.md")
: >"$OUT"
for name in $secrets; do
  grep -qE "^\| \`$name\` \| secret" <<<"$section" || echo "undocumented: $name" >>"$OUT"
done
if [ -n "$secrets" ] && [ ! -s "$OUT" ]; then ok "$t"; else not_ok "$t"; fi

echo "deploy tests: $passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# Serves the already-built release Worker with `wrangler dev` on loopback. Usage: scripts/dev.sh [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
port="${1:-${PORT:-8787}}"
if [ ! -f .dev.vars ]; then
  echo "note: no .dev.vars; copy .dev.vars.example to .dev.vars and fill in your Zotero key and a password." >&2
fi
# Serve build/ as it is: a config without [build], so wrangler does not rebuild (make dev just built it), and
# without the AI Search binding, which has no local emulation (wrangler would insist on a Cloudflare login).
config=.wrangler/dev.wrangler.toml
mkdir -p .wrangler
sed '/^\[build\]/,/^$/d; /^\[\[ai_search_namespaces\]\]/,/^$/d; s#^main = "build/#main = "../build/#' wrangler.toml > "$config"
[ -f .dev.vars ] && cp .dev.vars .wrangler/.dev.vars
echo
echo "  MCP endpoint: http://127.0.0.1:${port}/mcp"
echo "  Health:       http://127.0.0.1:${port}/health"
echo
exec "$WRANGLER" dev --config "$config" --ip 127.0.0.1 --port "$port" --persist-to .wrangler/state \
  --var ALLOWED_HOSTS:localhost,127.0.0.1,[::1] --show-interactive-dev-session=false

// Reading pages of a PDF attachment through the Worker (release wasm under `wrangler dev`) and the native server,
// their files on a real WebDAV server (Apache mod_dav) on loopback. Run by scripts/bench-attachments.sh, which
// puts a ~1 MB and a ~10 MB PDF on WebDAV under two demo attachments and sets WORKER_URL, NATIVE_URL, FILES.
//
// Per file and server: the first read of pages 1–5 (download, unzip, open lazily, extract: "cold"), the same
// pages again (the CACHE_KV text cache: "cached", median of ROUNDS), and pages 6–10 (a new range: downloaded
// again, "cold, warm isolate"). Compare within one run; absolute times on a shared machine are noisy.

import { modernRequest, oauthFlow, READ_SCOPES } from '../e2e/helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const targets = [
  { name: 'worker', url: process.env.WORKER_URL },
  { name: 'native', url: process.env.NATIVE_URL },
];
// key=label pairs, e.g. "UN79YVS8=1 MB (acm-sigconf) 3AJKNSWV=10 MB (pgfmanual)".
const files = (process.env.FILES ?? '').split(';').filter(Boolean).map((f) => f.split('='));

for (const target of targets) {
  if (!target.url) throw new Error(`${target.name.toUpperCase()}_URL is not set: run scripts/bench-attachments.sh`);
  process.env.MCP_URL = target.url;
  target.auth = `Bearer ${(await oauthFlow(READ_SCOPES)).access_token}`;
}

async function read(target, itemKey, fromPage, toPage) {
  const params = { name: 'zotero_read_attachment', arguments: { itemKey, fromPage, toPage } };
  const { headers, body } = modernRequest('tools/call', params, { headers: { authorization: target.auth } });
  const started = performance.now();
  const response = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${target.name} ${itemKey} ${fromPage}-${toPage}: HTTP ${response.status}: ${text.slice(0, 400)}`);
  }
  return elapsed;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${ms.toFixed(1)} ms`;

console.log('| file | server | pages 1–5, first read | pages 1–5, cached (median) | pages 6–10, first read |');
console.log('|---|---|---|---|---|');
for (const [key, label] of files) {
  for (const target of targets) {
    const cold = await read(target, key, 1, 5);
    const cached = [];
    for (let i = 0; i < ROUNDS; i++) cached.push(await read(target, key, 1, 5));
    const next = await read(target, key, 6, 10);
    console.log(`| ${label} | ${target.name} | ${fmt(cold)} | ${fmt(median(cached))} | ${fmt(next)} |`);
  }
}

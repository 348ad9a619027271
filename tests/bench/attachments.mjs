// Reading pages of a PDF attachment through the Worker (release wasm under `wrangler dev`) and the native server,
// their files on a real WebDAV server (Apache mod_dav) or on the simulator's Zotero Storage, both on loopback.
// Run by scripts/bench-attachments.sh, which sets WORKER_URL, NATIVE_URL, FILES, STORE and the counting proxies.
//
// Per file and server: the first read of pages 1–5 (download, unzip, open lazily, extract: "cold"), the same
// pages again (the CACHE_KV text cache: "cached", median of ROUNDS), and pages 6–10 (a new range: downloaded
// again, "cold, warm isolate"). With API_PROXY and FILES_PROXY (tests/bench/counting-proxy.mjs in front of the
// Zotero API and of the file store), each column also says how many requests the read sent to each. With UPLOAD
// (key=path;…), the files are first stored through the native server (zotero_put_attachment replacing each, from
// a sourceUrl this script serves on loopback: a request body is at most 4 MiB), as a user's upload would be. Compare within one run; absolute times on a shared machine are noisy.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { modernRequest, oauthFlow, READ_SCOPES, WRITE_SCOPES } from '../e2e/helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const STORE = process.env.STORE ?? 'WebDAV';
const targets = [
  { name: 'worker', url: process.env.WORKER_URL },
  { name: 'native', url: process.env.NATIVE_URL },
];
// key=label pairs, e.g. "UN79YVS8=1 MB (acm-sigconf);3AJKNSWV=10 MB (pgfmanual)".
const pairs = (name) => (process.env[name] ?? '').split(';').filter(Boolean).map((f) => f.split('='));
const files = pairs('FILES');
const proxies = { api: process.env.API_PROXY, files: process.env.FILES_PROXY };

for (const target of targets) {
  if (!target.url) throw new Error(`${target.name.toUpperCase()}_URL is not set: run scripts/bench-attachments.sh`);
  process.env.MCP_URL = target.url;
  target.auth = `Bearer ${(await oauthFlow(READ_SCOPES)).access_token}`;
}

async function call(url, auth, name, args) {
  const { headers, body } = modernRequest('tools/call', { name, arguments: args }, { headers: { authorization: auth } });
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${name} ${JSON.stringify(args).slice(0, 80)}: HTTP ${response.status}: ${text.slice(0, 400)}`);
  }
  return text;
}

// The files stored first, through the native server, when asked.
const uploads = pairs('UPLOAD');
if (uploads.length > 0) {
  const native = targets.find((t) => t.name === 'native');
  process.env.MCP_URL = native.url;
  const auth = `Bearer ${(await oauthFlow(WRITE_SCOPES)).access_token}`;
  const served = new Map(uploads.map(([key, path]) => [`/${key}.pdf`, readFileSync(path)]));
  const server = createServer((req, res) => {
    const body = served.get(req.url);
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': body.length }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  for (const [key] of uploads) {
    const sourceUrl = `http://127.0.0.1:${server.address().port}/${key}.pdf`;
    await call(native.url, auth, 'zotero_put_attachment', { replaceAttachmentKey: key, sourceUrl });
  }
  server.close();
}

// The newest request id each proxy has logged, and how many came after `since`.
async function proxyCount(proxy, since) {
  if (!proxy) return { last: 0, count: null };
  const response = await fetch(new URL(`/__counts?since=${since}`, proxy));
  const { last, entries } = await response.json();
  return { last, count: entries.length };
}

async function read(target, itemKey, fromPage, toPage) {
  const before = { api: (await proxyCount(proxies.api, 0)).last, files: (await proxyCount(proxies.files, 0)).last };
  const started = performance.now();
  await call(target.url, target.auth, 'zotero_read_attachment', { itemKey, fromPage, toPage });
  const elapsed = performance.now() - started;
  const api = (await proxyCount(proxies.api, before.api)).count;
  const stored = (await proxyCount(proxies.files, before.files)).count;
  return { elapsed, requests: api === null ? '' : ` (${api} + ${stored ?? '?'})` };
}

const median = (xs) => [...xs].sort((a, b) => a.elapsed - b.elapsed)[Math.floor(xs.length / 2)];
const fmt = (r) => `${r.elapsed.toFixed(1)} ms${r.requests}`;

console.log(`Files on ${STORE}.${proxies.api ? ' In brackets: requests to the Zotero API + to the file store.' : ''}`);
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

// Per-call time of the same MCP calls on the Worker (release wasm under `wrangler dev`) and on the native
// `zotero-mcp serve --http` (release build), both against one zotero-sim on loopback, over keep-alive HTTP.
// Calls alternate between the two servers so that machine noise hits both alike; compare the ratio, not the
// absolute figures. Run by scripts/bench-runtimes.sh (`make bench`), which sets WORKER_URL and NATIVE_URL.

import { modernRequest, oauthFlow, READ_SCOPES } from '../e2e/helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const WARMUP = 10;
const targets = [
  { name: 'worker', url: process.env.WORKER_URL },
  { name: 'native', url: process.env.NATIVE_URL },
];
const calls = [
  ['tools/list', 'tools/list', {}],
  ['zotero_search', 'tools/call', { name: 'zotero_search', arguments: { query: 'protein structure', limit: 20 } }],
  ['zotero_get_item', 'tools/call', { name: 'zotero_get_item', arguments: { key: 'T6W7H8UE', includeChildren: true } }],
];

for (const target of targets) {
  if (!target.url) throw new Error(`${target.name.toUpperCase()}_URL is not set: run scripts/bench-runtimes.sh`);
  process.env.MCP_URL = target.url;
  const tokens = await oauthFlow(READ_SCOPES);
  target.auth = `Bearer ${tokens.access_token}`;
}

async function once(target, method, params) {
  const { headers, body } = modernRequest(method, params, { headers: { authorization: target.auth } });
  const started = performance.now();
  const response = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${target.name} ${method}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  }
  return elapsed;
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

console.log(`Per-call time, median of ${ROUNDS} (alternating worker/native, keep-alive, loopback zotero-sim)`);
console.log('call               worker ms   native ms   native/worker');
for (const [label, method, params] of calls) {
  const times = { worker: [], native: [] };
  for (let round = 0; round < WARMUP + ROUNDS; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const elapsed = await once(target, method, params);
      if (round >= WARMUP) times[target.name].push(elapsed);
    }
  }
  const w = median(times.worker);
  const n = median(times.native);
  console.log(`${label.padEnd(18)} ${w.toFixed(2).padStart(9)} ${n.toFixed(2).padStart(11)} ${(n / w).toFixed(2).padStart(15)}`);
}

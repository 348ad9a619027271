// Side-by-side latency and Zotero request count of the same MCP calls on one or more MCP servers (issue 10).
// Run by scripts/bench-sidebyside.sh (`make bench`), which starts the Worker, a counting proxy in front of
// zotero-sim, and an empty "floor" Worker, and sets TARGETS and FLOOR_URL.
//
//   TARGETS="name=mcpUrl[=proxyUrl[=token]] ..."   space-separated; proxyUrl is a tests/bench/counting-proxy.mjs
//                                                   between that server and its Zotero API (empty or absent: no
//                                                   upstream figures); token is a bearer token (absent: one is
//                                                   obtained through the OAuth flow of tests/e2e/helpers.mjs)
//   FLOOR_URL=http://127.0.0.1:PORT/               the empty Worker
//   BENCH_ROUNDS=60                                 measured rounds
//   BENCH_WARMUP=30                                 unmeasured rounds before them
//   BENCH_CALLS="label,label"                       only these calls (by their label in CALLS)
//
// Every round runs every call on every target (the targets' order alternating), each call right after a POST
// of the same request to the floor Worker, so machine noise hits all of them alike. Every timed POST follows an
// untimed one to the same server (see `wake`). Per call and target:
//   latency      median wall time of the HTTP exchange, body read
//   requests     Zotero API requests the server made for the call (counted by its proxy)
//   steps        how many of those ran one after another: sorted by start, a request that starts after every
//                earlier request of the call has ended opens a new step; overlapping requests share one
//   upstream     median length of the union of those requests' intervals (time the server was waiting on Zotero)
//   own          median(latency - upstream) - median(floor): what the server itself adds, local workerd's cost
//                of each outbound fetch included
//   net          own less what local workerd costs for the call's outbound fetches and per byte of upstream
//                answer, both measured with the empty Worker fetching the proxy's /__pong: the server's own work.
//                Fetches are priced as the call made them: each sequential step at what the empty Worker pays
//                for that many fetches at once (one, two or three in parallel, measured every round; two at
//                once cost more than one, less than two one after the other)
// The floor is one median over every floor POST of the run (the calls' rounds are spread over the same time, so
// a per-call floor would only be noisier). It is the cost of local workerd: for a target not served by
// `wrangler dev` (the native server, say) own comes out too low, even negative.
// A call that fails (HTTP status other than 200, a JSON-RPC error, or isError) stops the bench with its text.

import { decodeResponse, legacyRequest, modernRequest, oauthFlow, READ_SCOPES } from '../e2e/helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
// The proxy's /__pong and its delay (scripts/bench-sidebyside.sh): the floor Worker fetches it to time one
// subrequest of local workerd.
const PONG_URL = process.env.PONG_URL;
const PONG_DELAY_MS = Number(process.env.PONG_DELAY_MS ?? 0);
// The size of the large /__pong answer that prices a byte of upstream answer in local workerd.
const PONG_BIG_BYTES = 200_000;
// V8 runs a wasm function in its baseline tier until it has been called often enough to be optimized; 30 rounds
// (about 250 requests per server) reach the steady state that a busy isolate serves from. The first request of a
// fresh isolate is scripts/bench-coldstart.sh's.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
// A proxied request still open when the call's answer arrived must finish within this, or the bench fails.
const SETTLE_MS = 1000;

const tool = (name, args) => ({ era: 'modern', method: 'tools/call', params: { name, arguments: args } });
const CALLS = [
  { label: 'server/discover', era: 'modern', method: 'server/discover', params: {} },
  { label: 'tools/list', era: 'modern', method: 'tools/list', params: {} },
  {
    label: 'initialize (2025-06-18)',
    era: 'legacy',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'zotero-mcp-bench', version: '1.0.0' } },
  },
  { label: 'search "urban" 5', ...tool('zotero_search', { query: 'urban', limit: 5 }) },
  { label: 'search "city" 5', ...tool('zotero_search', { query: 'city', limit: 5 }) },
  { label: 'search 25', ...tool('zotero_search', { limit: 25 }) },
  // T6W7H8UE has a PDF attachment with annotations and a note in the demo library (crates/sim/demo).
  { label: 'get_item +children', ...tool('zotero_get_item', { key: 'T6W7H8UE', includeChildren: true }) },
  { label: 'list_collections', ...tool('zotero_list_collections', {}) },
  { label: 'list_tags', ...tool('zotero_list_tags', {}) },
  { label: 'notes list', ...tool('zotero_notes', { action: 'list', itemKey: 'T6W7H8UE' }) },
  { label: 'annotations list', ...tool('zotero_annotations', { action: 'list', itemKey: 'T6W7H8UE' }) },
  // 93WJRKG5's text is in Zotero's full-text index: both servers read it from there, without a file store.
  { label: 'read_attachment (index)', ...tool('zotero_read_attachment', { itemKey: '93WJRKG5' }) },
  { label: 'find_duplicates', ...tool('zotero_find_duplicates', {}) },
].filter((call) => !process.env.BENCH_CALLS || process.env.BENCH_CALLS.split(',').includes(call.label));

// ---------------------------------------------------------------------------------------------------------
// Targets

function parseTargets(spec) {
  const targets = (spec ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((entry) => {
      const [name, url, proxy, ...token] = entry.split('=');
      if (!name || !url) throw new Error(`TARGETS entry "${entry}" is not name=mcpUrl[=proxyUrl[=token]]`);
      // A token may end in base64 padding: everything after the third '=' belongs to it.
      return { name, url, proxy: proxy || undefined, token: token.length ? token.join('=') : undefined };
    });
  if (targets.length === 0) throw new Error('TARGETS is not set: run scripts/bench-sidebyside.sh');
  // Samples are kept by name.
  if (new Set(targets.map((t) => t.name)).size !== targets.length) throw new Error('TARGETS names must differ');
  return targets;
}

async function authorize(target) {
  if (!target.token) {
    // helpers.mjs finds the server through MCP_URL.
    process.env.MCP_URL = target.url;
    target.token = (await oauthFlow(READ_SCOPES)).access_token;
  }
  target.auth = `Bearer ${target.token}`;
  target.seen = 0;
  target.strays = 0;
}

// ---------------------------------------------------------------------------------------------------------
// Upstream figures from the counting proxy

async function proxyLog(target, since) {
  const response = await fetch(new URL(`/__counts?since=${since}`, target.proxy));
  if (response.status !== 200) throw new Error(`${target.name}: proxy answered ${response.status}`);
  return response.json();
}

// The id after which this call's requests will appear. Requests logged since the last look came between two
// calls (a background request of the previous call would): they are tallied, not attributed to the next call.
async function markBefore(target) {
  const { last, entries } = await proxyLog(target, target.seen);
  target.strays += entries.length;
  target.seen = last;
  return last;
}

async function entriesAfter(target, mark) {
  const deadline = performance.now() + SETTLE_MS;
  for (;;) {
    const { last, entries } = await proxyLog(target, mark);
    if (entries.every((e) => e.end !== null)) {
      target.seen = last;
      return entries;
    }
    if (performance.now() > deadline) throw new Error(`${target.name}: an upstream request did not finish`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const byStart = (entries) => [...entries].sort((a, b) => a.start - b.start);

// The sequential steps of a call, as the number of requests in each (its width): sorted by start, a request
// that starts after every earlier request has ended opens a new step; overlapping requests share one.
function sequentialSteps(entries) {
  const widths = [];
  let frontier = -Infinity; // latest end among the requests started so far
  for (const e of byStart(entries)) {
    if (e.start >= frontier) widths.push(0);
    widths[widths.length - 1] += 1;
    frontier = Math.max(frontier, e.end);
  }
  return widths;
}

function unionMs(entries) {
  let total = 0;
  let open; // the interval being merged: { from, to }
  for (const e of byStart(entries)) {
    if (open && e.start <= open.to) {
      open.to = Math.max(open.to, e.end);
    } else {
      if (open) total += open.to - open.from;
      open = { from: e.start, to: e.end };
    }
  }
  return open ? total + open.to - open.from : 0;
}

// ---------------------------------------------------------------------------------------------------------
// One exchange

function requestFor(call, auth) {
  const headers = auth ? { authorization: auth } : {};
  return call.era === 'legacy'
    ? legacyRequest(call.method, call.params, { headers })
    : modernRequest(call.method, call.params, { headers });
}

// The clock stops when the last byte of the answer is in: parsing it (JSON, or SSE then JSON) is the client's
// work, and a larger answer would otherwise be charged to the server twice.
async function timedPost(url, { headers, body }) {
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  const ms = performance.now() - started;
  const received = new Response(text === '' ? null : text, { status: response.status, headers: response.headers });
  return { ms, ...(await decodeResponse(received)) };
}

function failure(res) {
  if (res.status !== 200) return `HTTP ${res.status}`;
  if (!res.json) return 'no JSON-RPC answer';
  if (res.json.error) return 'JSON-RPC error';
  if (res.json.result?.isError) return 'isError';
  return undefined;
}

// An untimed request to the same server just before a timed one. On this kind of machine a process that has
// been idle for even a few tens of milliseconds (while the other target, the floor or an upstream request ran)
// answers its next request 1-6 ms slower: CPU and scheduler wake-up, which every server under `wrangler dev`
// pays alike and which is not its own work. Without credentials, so an OAuth server answers 401 at once; an
// open server answers a ping. Its answer is not looked at.
async function wake(url, headers) {
  const { authorization: _, ...anonymous } = headers;
  const response = await fetch(url, { method: 'POST', headers: anonymous, body: WAKE_BODY });
  await response.arrayBuffer();
}
const WAKE_BODY = JSON.stringify({ jsonrpc: '2.0', id: 'bench-wake', method: 'ping' });

async function callOnce(target, call) {
  const mark = target.proxy ? await markBefore(target) : 0;
  const request = requestFor(call, target.auth);
  await wake(target.url, request.headers);
  const res = await timedPost(target.url, request);
  const why = failure(res);
  if (why) throw new Error(`${target.name} ${call.label}: ${why}: ${res.text.slice(0, 500)}`);
  if (!target.proxy) return { ms: res.ms };
  const entries = await entriesAfter(target, mark);
  const bytes = entries.reduce((sum, e) => sum + (e.bytes ?? 0), 0);
  const widths = sequentialSteps(entries);
  return { ms: res.ms, requests: entries.length, steps: widths.length, widths, upstreamMs: unionMs(entries), bytes, entries };
}

// The same request, headers and body, to the empty Worker: only the plumbing is timed. With `pong`, the floor
// Worker also fetches the proxy's /__pong (answered after the proxy's delay, nothing behind it), `width` times at
// once.
async function floorOnce(floorUrl, call, pong, width = 1) {
  const request = requestFor(call, 'Bearer floor');
  await wake(floorUrl, request.headers);
  if (pong) request.headers = { ...request.headers, 'x-floor-fetch': pong, 'x-floor-fetch-count': String(width) };
  const res = await timedPost(floorUrl, request);
  if (res.status !== 200) throw new Error(`floor: HTTP ${res.status}: ${res.text.slice(0, 200)}`);
  return res.ms;
}

// ---------------------------------------------------------------------------------------------------------
// Rounds and figures

function newSamples(targets) {
  return { floor: [], priceFloor: [], floorFetch: [], floorWide: { 2: [], 3: [] }, pongBig: [], calls: CALLS.map(() => Object.fromEntries(targets.map((t) => [t.name, []]))) };
}

// What local workerd adds for outbound fetches, priced in rounds of their own, half before the calls and half
// after (so a drift over the run reaches both alike): a call timed soon after such a round comes out up to
// 0.6 ms slower, even after several untimed requests to every server, so fetches and calls are not mixed. Each
// round: the plain floor, one fetch, two and three at once (a step several requests wide), and one large answer:
// with the small one, the difference is workerd's cost of taking in the bytes, which both servers pay for every
// upstream answer.
async function priceRound(floorUrl, samples, index) {
  const plain = await floorOnce(floorUrl, CALLS[0]);
  const single = await floorOnce(floorUrl, CALLS[0], PONG_URL);
  const wide = { 2: await floorOnce(floorUrl, CALLS[0], PONG_URL, 2), 3: await floorOnce(floorUrl, CALLS[0], PONG_URL, 3) };
  const big = await floorOnce(floorUrl, CALLS[0], `${PONG_URL}?bytes=${PONG_BIG_BYTES}`);
  if (index >= WARMUP) {
    samples.priceFloor.push(plain);
    samples.floorFetch.push(single);
    samples.pongBig.push(big);
    for (const width of [2, 3]) samples.floorWide[width].push(wide[width]);
  }
}

async function round(targets, floorUrl, samples, index) {
  const order = index % 2 === 0 ? targets : [...targets].reverse();
  for (const [i, call] of CALLS.entries()) {
    for (const target of order) {
      const floorMs = await floorOnce(floorUrl, call);
      const sample = await callOnce(target, call);
      if (index >= WARMUP) {
        samples.floor.push(floorMs);
        samples.calls[i][target.name].push(sample);
      }
    }
  }
}

async function sequence(from, to, step) {
  for (let index = from; index < to; index += 1) await step(index);
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// Counts should not vary between rounds; when they do, the range says so.
function countOf(values) {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? String(lo) : `${lo}-${hi}`;
}

// What local workerd adds for a step `width` fetches wide: measured up to three, beyond that extended by the
// last measured increment.
function stepCost(stepMs, width) {
  if (width <= 3) return stepMs[width];
  return stepMs[3] + (width - 3) * Math.max(0, stepMs[3] - stepMs[2]);
}

function figures(runs, floorMs, stepMs, perByteMs = 0) {
  const proxied = runs[0].requests !== undefined;
  const upstream = (r) => (proxied ? r.upstreamMs : 0);
  return {
    latency: median(runs.map((r) => r.ms)),
    requests: proxied ? countOf(runs.map((r) => r.requests)) : '-',
    steps: proxied ? countOf(runs.map((r) => r.steps)) : '-',
    upstream: proxied ? median(runs.map(upstream)) : undefined,
    own: median(runs.map((r) => r.ms - upstream(r))) - floorMs,
    // What is left once local workerd's cost of the outbound fetches, step by step, is taken off as well.
    net:
      stepMs === undefined || !proxied
        ? undefined
        : median(
            runs.map(
              (r) => r.ms - upstream(r) - r.widths.reduce((sum, w) => sum + stepCost(stepMs, w), 0) - r.bytes * perByteMs,
            ),
          ) - floorMs,
  };
}

// What one call's upstream requests were (its last measured run), with their durations.
function requestsOf(runs) {
  const last = byStart(runs.at(-1).entries ?? []);
  const origin = last[0]?.start ?? 0;
  return last.map(
    (e) => `+${(e.start - origin).toFixed(1)} ms ${e.method} ${e.path} (${(e.end - e.start).toFixed(1)} ms)`,
  );
}

const COLUMNS = [
  ['call', 24, 'left'],
  ['target', 8, 'left'],
  ['latency ms', 10],
  ['requests', 8],
  ['steps', 5],
  ['upstream ms', 11],
  ['own ms', 7],
  ['net ms', 7],
];

function row(cells, ratioCell) {
  const parts = cells.map((cell, i) => {
    const [, width, align] = COLUMNS[i];
    return align === 'left' ? String(cell).padEnd(width) : String(cell).padStart(width);
  });
  return `${parts.join('  ')}${ratioCell === undefined ? '' : `  ${ratioCell}`}`;
}

function report(targets, samples) {
  const first = targets[0].name;
  const ratioHeader = targets.length > 1 ? `${`own/${first}`.padStart(9)}  ${`net/${first}`.padStart(9)}` : undefined;
  console.log(
    `Side by side: median of ${ROUNDS} rounds after ${WARMUP} warm-up, targets interleaved (${targets.map((t) => t.name).join(', ')}).`,
  );
  const floorMs = median(samples.floor);
  console.log(
    `floor = ${floorMs.toFixed(2)} ms, median of ${samples.floor.length} POSTs of the same requests to an empty Worker ` +
      'under wrangler dev; own = median(latency - upstream) - floor.',
  );
  let stepMs;
  let perByteMs = 0;
  if (samples.floorFetch.length) {
    // Against the floor of the same rounds.
    const added = (xs) => Math.max(0, median(xs) - median(samples.priceFloor) - PONG_DELAY_MS);
    stepMs = { 1: added(samples.floorFetch), 2: added(samples.floorWide[2]), 3: added(samples.floorWide[3]) };
    perByteMs = Math.max(0, (median(samples.pongBig) - median(samples.floorFetch)) / PONG_BIG_BYTES);
    console.log(
      `local workerd adds ${stepMs[1].toFixed(2)} ms for one subrequest, ${stepMs[2].toFixed(2)} ms for two at once, ` +
        `${stepMs[3].toFixed(2)} ms for three, plus ${(perByteMs * 100_000).toFixed(2)} ms per 100 KB of answer ` +
        "(the empty Worker fetching the proxy's /__pong, less the floor and the delay); net = own less those for " +
        "each sequential step and upstream byte: the server's own work.",
    );
  }
  console.log(row(COLUMNS.map(([title]) => title), ratioHeader));
  const details = [];
  const fmt = (x) => (x === undefined ? '-' : x.toFixed(2));
  for (const [i, call] of CALLS.entries()) {
    const base = figures(samples.calls[i][first], floorMs, stepMs, perByteMs);
    for (const target of targets) {
      const runs = samples.calls[i][target.name];
      const f = figures(runs, floorMs, stepMs, perByteMs);
      let ratio;
      if (ratioHeader) {
        const own = target.name === first ? '' : (f.own / base.own).toFixed(2);
        const net = target.name === first || f.net === undefined ? '' : (f.net / base.net).toFixed(2);
        ratio = `${own.padStart(9)}  ${net.padStart(9)}`;
      }
      console.log(
        row(
          [call.label, target.name, f.latency.toFixed(2), f.requests, f.steps, fmt(f.upstream), fmt(f.own), fmt(f.net)],
          ratio,
        ),
      );
      if (target.proxy) details.push(`  ${call.label} / ${target.name}:`, ...requestsOf(runs).map((r) => `    ${r}`));
    }
  }
  console.log('Upstream requests of the last round, in start order:');
  for (const line of details) console.log(line);
  for (const target of targets) {
    if (target.strays) console.log(`${target.name}: ${target.strays} upstream requests came between calls (not counted above)`);
  }
}

async function main() {
  const targets = parseTargets(process.env.TARGETS);
  const floorUrl = process.env.FLOOR_URL;
  if (!floorUrl) throw new Error('FLOOR_URL is not set: run scripts/bench-sidebyside.sh');
  for (const target of targets) await authorize(target);
  const samples = newSamples(targets);
  const rounds = WARMUP + ROUNDS;
  const priceRounds = (from, to) => (PONG_URL ? sequence(from, to, (index) => priceRound(floorUrl, samples, index)) : undefined);
  await priceRounds(0, WARMUP + Math.ceil(ROUNDS / 2));
  for (let index = 0; index < rounds; index += 1) await round(targets, floorUrl, samples, index);
  await priceRounds(WARMUP + Math.ceil(ROUNDS / 2), rounds);
  report(targets, samples);
}

await main();

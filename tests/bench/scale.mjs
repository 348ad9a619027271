// The scale bench's measurements and its table (scripts/bench-scale.sh, `make bench`; docs/performance.md,
// "Scale"). Two modes:
//
//   node tests/bench/scale.mjs measure   one library size: SIZE, SIM_URL (the simulator itself, for the bench's
//                                         own reads and the upstream changes), PROXY_URL (the counting proxy the
//                                         servers' Zotero is), NATIVE_URL and/or WORKER_URL, NATIVE_DATA (the
//                                         native server's data directory), WORKER_STATE (the Worker's
//                                         --persist-to), RESULTS (a JSON-lines file the figures are appended to)
//   node tests/bench/scale.mjs report F   the table of every size in F
//
// Per server, in order:
//   fill         the mirror's first fill. On the native server by calls of zotero_find_duplicates (each brings the
//                mirror forward by at most 20 requests, then scans the newest items live while it is incomplete);
//                on the Worker by scheduled runs (wrangler's /__scheduled: each run gives the mirror what the
//                semantic index left of its 45 requests, at most 20; no AI Search here, so the index takes none).
//                Figures: calls or runs, Zotero requests (all, and the mirror's own: `since=` pages and
//                /deleted), and the time of them all (a call's wall time; a run's, from its first Zotero request to
//                the end of its last: the handler answers at once and works on in waitUntil).
//   tools        after the fill, each tool SCALE_ROUNDS times after a first call (shown on its own where it
//                cost much more, as zotero_check_references' first read of the library): the median of the Zotero
//                requests it made, its wall time, and the server's own time (wall time less the time some Zotero
//                request of the call was open, by the proxy's log). zotero_check_references gets 20 DOIs of the
//                library, one per line, without registries or support checks, following nextCursor to the end
//                (its figures are the whole check's); zotero_search a title of the library.
//   incremental  after all servers' tools: 3 items changed upstream (straight to the simulator, as another
//                client would), then one zotero_find_duplicates per server: its requests, and the mirror's share.
//   size         the mirror on disk: mirror.sqlite3 and its -wal; the Worker's local D1 file and its -wal.

import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { modernRequest, oauthFlow, READ_SCOPES } from '../e2e/helpers.mjs';

const LIBRARY = 'users/1234567';
const KEY = 'demo';
const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 5);
/** Calls or runs a fill may take before the bench gives up (50,000 items need about 26). */
const MAX_FILL_STEPS = 200;
/** Calls one check of 20 references may take (a check without the mirror pages through the library). */
const MAX_CHECK_CALLS = 80;
const CALL_TIMEOUT_MS = 300_000;

// -------------------------------------------------------------------------------------------------------------
// The proxy's log.

async function getJson(url, init = {}) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return response.json();
}

const proxyLast = async () => (await getJson(`${process.env.PROXY_URL}/__counts?since=${Number.MAX_SAFE_INTEGER}`)).last;

/** The proxied requests after id `mark`, once every one of them has been answered. */
async function proxiedAfter(mark) {
  const deadline = performance.now() + 5_000;
  for (;;) {
    const { entries } = await getJson(`${process.env.PROXY_URL}/__counts?since=${mark}`);
    if (entries.every((e) => e.end !== null)) return entries;
    if (performance.now() > deadline) throw new Error('a Zotero request of the call did not finish');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** How long some request of `entries` was open (the union of their intervals). */
function openMs(entries) {
  let total = 0;
  let open;
  for (const e of [...entries].sort((a, b) => a.start - b.start)) {
    if (open && e.start <= open.to) {
      open.to = Math.max(open.to, e.end);
    } else {
      if (open) total += open.to - open.from;
      open = { from: e.start, to: e.end };
    }
  }
  return open ? total + open.to - open.from : 0;
}

/** A request the mirror's sync sends: a page of what changed since a version, or the deletions. */
const isMirrors = (e) => /[?&]since=/.test(e.path) || e.path.includes('/deleted');

// -------------------------------------------------------------------------------------------------------------
// Calls.

async function callTool(target, name, args) {
  const { headers, body } = modernRequest('tools/call', { name, arguments: args }, { headers: { authorization: target.auth } });
  const mark = await proxyLast();
  const started = performance.now();
  const response = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${target.name} ${name}: HTTP ${response.status}: ${text.slice(0, 600)}`);
  }
  const message = JSON.parse(text.startsWith('{') ? text : text.split('\ndata: ')[1]);
  const entries = await proxiedAfter(mark);
  return { out: message.result.structuredContent, ms, entries, ownMs: ms - openMs(entries) };
}

/** How long a scheduled run's log must stay still before the run counts as over. */
const QUIET_MS = 1_500;

/**
 * One scheduled run of the Worker (wrangler dev --test-scheduled), and the Zotero requests it made. The handler
 * hands its work to `waitUntil` and answers at once, so the run is over when the proxy has seen no new request,
 * and has every one answered, for QUIET_MS. Its time is the span of its requests (the proxy's clock).
 */
async function scheduledRun(target) {
  const mark = await proxyLast();
  const url = new URL('/__scheduled?cron=17+*/6+*+*+*', target.url);
  const response = await fetch(url, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  await response.text();
  if (!response.ok) throw new Error(`${target.name}: /__scheduled answered ${response.status}`);
  let seen = -1;
  let stillSince = performance.now();
  for (;;) {
    const { entries } = await getJson(`${process.env.PROXY_URL}/__counts?since=${mark}`);
    const settled = entries.every((e) => e.end !== null);
    if (entries.length !== seen || !settled) {
      seen = entries.length;
      stillSince = performance.now();
    } else if (performance.now() - stillSince > QUIET_MS) {
      const ms = entries.length ? Math.max(...entries.map((e) => e.end)) - Math.min(...entries.map((e) => e.start)) : 0;
      return { ms, entries };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

// -------------------------------------------------------------------------------------------------------------
// The library, read straight from the simulator (not through the proxy: not the servers' requests).

async function simGet(path) {
  const response = await fetch(`${process.env.SIM_URL}/${LIBRARY}${path}`, {
    headers: { 'zotero-api-key': KEY, 'zotero-api-version': '3' },
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return { json: await response.json(), version: Number(response.headers.get('last-modified-version')) };
}

/** `count` regular items spread over the library. */
async function spreadItems(size, count) {
  const items = [];
  for (let at = 0; items.length < count; at++) {
    const start = Math.floor(((at + 0.5) * size) / count);
    const { json } = await simGet(`/items/top?limit=1&start=${start}&sort=dateAdded&direction=asc`);
    items.push(json[0]);
  }
  return items;
}

/** Three items changed upstream, as another client would change them. */
async function changeThree(size) {
  const items = await spreadItems(size, 3);
  for (const item of items) {
    const response = await fetch(`${process.env.SIM_URL}/${LIBRARY}/items/${item.key}`, {
      method: 'PATCH',
      headers: {
        'zotero-api-key': KEY,
        'zotero-api-version': '3',
        'content-type': 'application/json',
        'if-unmodified-since-version': String(item.version),
      },
      body: JSON.stringify({ title: `${item.data.title} (revised)` }),
      signal: AbortSignal.timeout(60_000),
    });
    assert.equal(response.status, 204, `PATCH ${item.key}: ${await response.text()}`);
  }
}

// -------------------------------------------------------------------------------------------------------------
// The figures.

function record(entry) {
  appendFileSync(process.env.RESULTS, `${JSON.stringify({ size: Number(process.env.SIZE), ...entry })}\n`);
}

async function fillByCalls(target) {
  const fill = { calls: 0, requests: 0, mirrorRequests: 0, ms: 0, mostInOne: 0 };
  for (;;) {
    assert.ok(fill.calls < MAX_FILL_STEPS, `${target.name}: the mirror is not complete after ${MAX_FILL_STEPS} calls`);
    const { out, ms, entries } = await callTool(target, 'zotero_find_duplicates', {});
    fill.calls += 1;
    fill.requests += entries.length;
    fill.mirrorRequests += entries.filter(isMirrors).length;
    fill.mostInOne = Math.max(fill.mostInOne, entries.length);
    fill.ms += ms;
    if (out.mirror?.complete) return fill;
    assert.ok(out.mirror, `${target.name}: no mirror block: ${JSON.stringify(out).slice(0, 300)}`);
  }
}

async function fillByRuns(target) {
  const fill = { runs: 0, requests: 0, mirrorRequests: 0, ms: 0, mostInOne: 0 };
  for (;;) {
    assert.ok(fill.runs < MAX_FILL_STEPS, `${target.name}: the mirror is not complete after ${MAX_FILL_STEPS} runs`);
    const { ms, entries } = await scheduledRun(target);
    // A run that reads nothing since version 0 found the fill done (it only asked whether anything changed).
    if (!entries.some((e) => /[?&]since=0(&|$)/.test(e.path))) break;
    fill.runs += 1;
    fill.requests += entries.length;
    fill.mirrorRequests += entries.filter(isMirrors).length;
    fill.mostInOne = Math.max(fill.mostInOne, entries.length);
    fill.ms += ms;
  }
  const { out } = await callTool(target, 'zotero_list_tags', { limit: 1 });
  assert.equal(out.mirror?.complete, true, `${target.name}: the scheduled runs ended before the mirror was complete`);
  return fill;
}

async function measureTool(target, label, name, args, check) {
  const runs = [];
  for (let round = 0; round <= ROUNDS; round++) {
    let calls = 0;
    let requests = 0;
    let ms = 0;
    let ownMs = 0;
    let last;
    let cursor;
    do {
      assert.ok(calls < MAX_CHECK_CALLS, `${target.name} ${label}: more than ${MAX_CHECK_CALLS} calls`);
      const result = await callTool(target, name, cursor ? { ...args, cursor } : args);
      calls += 1;
      requests += result.entries.length;
      ms += result.ms;
      ownMs += result.ownMs;
      last = result.out;
      check?.(last);
      cursor = last.nextCursor;
    } while (cursor);
    // The first call is not among the measured: it finds the mirror (or a tool's own cache) as the previous
    // tool left it. Its figures are kept apart.
    runs.push({ calls, requests, ms, ownMs, mirror: last.mirror?.complete ?? null });
  }
  const first = runs.shift();
  const figures = {
    label,
    calls: median(runs.map((r) => r.calls)),
    requests: median(runs.map((r) => r.requests)),
    wallMs: median(runs.map((r) => r.ms)),
    ownMs: median(runs.map((r) => r.ownMs)),
    fromMirror: runs.every((r) => r.mirror === true),
    first: { calls: first.calls, requests: first.requests, wallMs: first.ms, ownMs: first.ownMs },
  };
  record({ target: target.name, kind: 'tool', ...figures });
  console.error(`  ${target.name} ${label}: ${JSON.stringify(figures)}`);
}

function fileBytes(paths) {
  return paths.filter((p) => existsSync(p)).reduce((sum, p) => sum + statSync(p).size, 0);
}

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir, suffix) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((path) => path.endsWith(suffix) && statSync(path).isFile());
}

/** The mirror's database file, and its write-ahead log (pages not yet copied into the file). */
function mirrorBytes(target) {
  if (target.name === 'native') {
    const base = join(process.env.NATIVE_DATA, 'mirror.sqlite3');
    return { bytes: fileBytes([base]), walBytes: fileBytes([`${base}-wal`]) };
  }
  // wrangler's local D1: one SQLite file per database under <persist-to>/v3/d1.
  const d1 = join(process.env.WORKER_STATE, 'v3', 'd1');
  return { bytes: fileBytes(filesUnder(d1, '.sqlite')), walBytes: fileBytes(filesUnder(d1, '.sqlite-wal')) };
}

async function measure() {
  const size = Number(process.env.SIZE);
  const targets = [
    { name: 'native', url: process.env.NATIVE_URL },
    { name: 'worker', url: process.env.WORKER_URL },
  ].filter((t) => t.url);
  const sample = await spreadItems(size, 20);
  const dois = sample.map((item) => item.data.DOI).filter(Boolean);
  assert.equal(dois.length, 20, 'every sampled item has a DOI');
  const title = sample[7].data.title;

  for (const target of targets) {
    process.env.MCP_URL = target.url;
    target.auth = `Bearer ${(await oauthFlow(READ_SCOPES)).access_token}`;
    const fill = target.name === 'worker' ? await fillByRuns(target) : await fillByCalls(target);
    record({ target: target.name, kind: 'fill', ...fill });
    console.error(`  ${target.name} fill: ${JSON.stringify(fill)}`);

    await measureTool(target, 'zotero_find_duplicates', 'zotero_find_duplicates', {}, (out) => {
      assert.equal(out.mirror?.complete, true);
      assert.ok(out.groups.length > 0 || size < 50, 'the planted duplicates are found');
    });
    await measureTool(target, 'zotero_list_tags', 'zotero_list_tags', {});
    await measureTool(target, 'zotero_list_collections', 'zotero_list_collections', {});
    await measureTool(
      target,
      'zotero_check_references (20 DOIs)',
      'zotero_check_references',
      { text: dois.join('\n'), checkRegistry: false, checkSupport: false, limit: 20 },
      (out) => {
        if (!out.nextCursor) assert.equal(out.counts.matched, out.references.length, JSON.stringify(out.counts));
      },
    );
    await measureTool(target, 'zotero_search (a title)', 'zotero_search', { query: title }, (out) => {
      assert.ok(out.items.length >= 1, `"${title}" finds its item`);
    });
  }

  await changeThree(size);
  for (const target of targets) {
    const { entries, ms, ownMs, out } = await callTool(target, 'zotero_find_duplicates', {});
    assert.equal(out.mirror?.complete, true);
    const incremental = { requests: entries.length, mirrorRequests: entries.filter(isMirrors).length, ms, ownMs };
    record({ target: target.name, kind: 'incremental', ...incremental });
    console.error(`  ${target.name} incremental: ${JSON.stringify(incremental)}`);
    record({ target: target.name, kind: 'size', ...mirrorBytes(target) });
  }
}

// -------------------------------------------------------------------------------------------------------------
// The table.

function report(file) {
  const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  const columns = [];
  for (const r of rows) {
    if (!columns.some((c) => c.size === r.size && c.target === r.target)) columns.push({ size: r.size, target: r.target });
  }
  const find = (column, kind, label) =>
    rows.find((r) => r.size === column.size && r.target === column.target && r.kind === kind && (!label || r.label === label));
  const ms = (value) => `${Math.round(value).toLocaleString('en')} ms`;
  const count = (value) => value.toLocaleString('en');
  const name = (target) => (target === 'worker' ? 'Worker' : 'native');
  const lines = [];
  lines.push(`| | ${columns.map((c) => `${count(c.size)} items, ${name(c.target)}`).join(' | ')} |`);
  lines.push(`|---|${columns.map(() => '---:').join('|')}|`);
  const row = (label, cell) => lines.push(`| ${label} | ${columns.map((c) => cell(c) ?? '').join(' | ')} |`);
  row('first fill: calls (native) or scheduled runs (Worker)', (c) => {
    const f = find(c, 'fill');
    return f && count(f.calls ?? f.runs);
  });
  row('first fill: Zotero requests (the mirror\'s own)', (c) => {
    const f = find(c, 'fill');
    return f && `${count(f.requests)} (${count(f.mirrorRequests)})`;
  });
  row('first fill: most requests in one call or run', (c) => find(c, 'fill')?.mostInOne);
  row('first fill: time', (c) => {
    const f = find(c, 'fill');
    return f && ms(f.ms);
  });
  const labels = [...new Set(rows.filter((r) => r.kind === 'tool').map((r) => r.label))];
  for (const label of labels) {
    row(`${label}: requests · wall · server's own`, (c) => {
      const t = find(c, 'tool', label);
      if (!t) return undefined;
      const calls = t.calls > 1 ? `, ${t.calls} calls` : '';
      return `${t.requests} · ${ms(t.wallMs)} · ${ms(t.ownMs)}${calls}${t.fromMirror ? '' : ' (live)'}`;
    });
  }
  // A tool that keeps its own copy of the library (zotero_check_references' snapshot in CACHE_KV) reads it on
  // its first call: that call's figures too.
  for (const label of labels) {
    const firsts = columns.map((c) => find(c, 'tool', label)?.first);
    if (!firsts.some((f, at) => f && f.requests > 2 * (find(columns[at], 'tool', label)?.requests ?? 0) + 2)) continue;
    row(`${label}, its first call: requests · wall · server's own`, (c) => {
      const f = find(c, 'tool', label)?.first;
      return f && `${f.requests} · ${ms(f.wallMs)} · ${ms(f.ownMs)}${f.calls > 1 ? `, ${f.calls} calls` : ''}`;
    });
  }
  row('incremental sync after 3 changes: requests (the mirror\'s own)', (c) => {
    const i = find(c, 'incremental');
    return i && `${i.requests} (${i.mirrorRequests})`;
  });
  row('the mirror on disk', (c) => {
    const s = find(c, 'size');
    return s && `${(s.bytes / 1_048_576).toFixed(1)} MB (+${(s.walBytes / 1_048_576).toFixed(1)} MB WAL)`;
  });
  console.log('Scale: the whole-library tools from the library mirror (tests/bench/scale.mjs)');
  console.log(lines.join('\n'));
}

const [mode, file] = process.argv.slice(2);
if (mode === 'measure') await measure();
else if (mode === 'report') report(file);
else throw new Error('usage: node tests/bench/scale.mjs measure | report <results.jsonl>');

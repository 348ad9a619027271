// `zotero-mcp serve --stdio --local` (Zotero Desktop's local API, files from its data directory) against the Web
// API path (`serve --stdio`: zotero.org's API, files from Zotero Storage), per call, driven by the official
// client's stdio transport (@modelcontextprotocol/client). Run by scripts/bench-desktop.sh, which starts the
// simulators (zotero-sim --local-api 10 with a data directory; zotero-sim with the demo's files on Zotero Storage)
// and sets:
//
//   ZOTERO_MCP_BIN            the release native binary
//   LOCAL_URL, LOCAL_DATA     the local-API simulator (its base, without /api) and its data directory
//   WEB_URL                   the Web API simulator
//   LOCAL_COUNT_URL           a counting proxy (tests/bench/counting-proxy.mjs) in front of the local-API simulator
//   WEB_COUNT_URL, WEB_COUNT_STORAGE
//                             counting proxies in front of a second Web API simulator and of its storage origin
//                             (that simulator's signed URLs name the storage proxy)
//   BENCH_RUNS (20), BENCH_WARMUPS (2), BENCH_COLD_ROUNDS (7), LOG_DIR (the servers' stderr, one file each)
//
// The calls: zotero_search {query: '宋代', limit: 3} and zotero_read_attachment {itemKey: Z36ESMED, pages 1–5}
// (llncsdoc.pdf, the demo library's real seven-page PDF: the read must answer pages [1, 2, 3, 4, 5] in both
// setups). An answer the server's text budget cuts (`truncated: true`) is read on from the page after its last in
// further calls, timed and counted with the first: the read's figures are per full 5-page read.
// The server keeps an extracted page range in its KV (ZOTERO_MCP_DATA_DIR, `text:` keys), so a repeated read is a
// cache hit; the columns keep that apart:
//
//   cold      the first call of a fresh server with an empty data directory (connected: initialize done),
//             median of BENCH_COLD_ROUNDS fresh servers: first connection to Zotero, and for the read, the file
//             fetched and its pages extracted
//   uncached  (the read only) a fresh data directory, but the server has already made one search: the file
//             fetched and extracted, connections to Zotero open
//   warm      one server, BENCH_WARMUPS calls first, then BENCH_RUNS timed: median and p90 (the read from the KV)
//
// and, per setup, what starting a server costs before any call (spawn to `initialize` answered: the local mode
// asks Zotero what it is then), with the requests it sends. The setups take turns (cold rounds and warm runs
// alternate between them, the first changing each time), so load from elsewhere on the machine falls on both
// alike.
//
// Times are the client's, callTool to its answer, through the stdio pipe; the servers talk to the simulators
// directly (a read that takes more than one call is timed from the first call to the last answer). The requests
// each call sends are counted in a separate pass through the counting proxies (a proxy adds a hop per request, so
// it stays out of the timed pass).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const BIN = process.env.ZOTERO_MCP_BIN;
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARMUPS = Number(process.env.BENCH_WARMUPS ?? 2);
const COLD_ROUNDS = Number(process.env.BENCH_COLD_ROUNDS ?? 7);
const TIMEOUT = 30_000;
const stateRoot = mkdtempSync(join(tmpdir(), 'zotero-mcp-bench-desktop-'));
process.on('exit', () => rmSync(stateRoot, { recursive: true, force: true }));
const LOG_DIR = process.env.LOG_DIR ?? stateRoot;
for (const name of ['ZOTERO_MCP_BIN', 'LOCAL_URL', 'LOCAL_DATA', 'WEB_URL']) {
  if (!process.env[name]) throw new Error(`${name} is not set: run through scripts/bench-desktop.sh`);
}

const SEARCH = { name: 'zotero_search', arguments: { query: '宋代', limit: 3 } };
const READ = { name: 'zotero_read_attachment', arguments: { itemKey: 'Z36ESMED', fromPage: 1, toPage: 5 } };
/** llncsdoc.pdf has seven pages: a full read of pages 1–5 answers exactly these, over one call or more. */
const PAGES = [1, 2, 3, 4, 5];

/** The two setups: how to start the server, what source a read must name, and where to count its requests. */
const setups = [
  {
    id: 'local',
    label: 'Desktop (--local)',
    source: 'zotero-desktop',
    args: ['serve', '--stdio', '--local'],
    env: (base) => ({ ZOTERO_LOCAL_URL: `${base}/api`, ZOTERO_DATA_DIR: process.env.LOCAL_DATA }),
    base: process.env.LOCAL_URL,
    counting: process.env.LOCAL_COUNT_URL
      ? { base: process.env.LOCAL_COUNT_URL, proxies: [['local API', process.env.LOCAL_COUNT_URL]] }
      : null,
  },
  {
    id: 'web',
    label: 'Web API + Storage',
    source: 'zotero-storage',
    args: ['serve', '--stdio'],
    env: (base) => ({ ZOTERO_API_BASE: base, ZOTERO_API_KEY: 'demo', ZOTERO_LIBRARY_ID: '1234567', FILE_STORAGE: 'zotero' }),
    base: process.env.WEB_URL,
    counting: process.env.WEB_COUNT_URL
      ? {
          base: process.env.WEB_COUNT_URL,
          proxies: [
            ['Web API', process.env.WEB_COUNT_URL],
            ['storage', process.env.WEB_COUNT_STORAGE],
          ],
        }
      : null,
  },
];

let serverCount = 0;
/** The read's text per setup (its first read): both must read the same text. */
const readText = {};
/** The calls a full read took per setup: the same in every read, and reported with the figures. */
const readCalls = {};
/** A fresh `zotero-mcp serve --stdio` with an empty data directory (and HOME), connected. */
async function start(setup, base = setup.base) {
  const n = ++serverCount;
  const state = join(stateRoot, `${setup.id}-${n}`);
  // Owner-only, as the server asks of its data directory (else it warns on every start).
  mkdirSync(state, { mode: 0o700 });
  const transport = new StdioClientTransport({
    command: BIN,
    args: setup.args,
    env: {
      PATH: process.env.PATH ?? '',
      ZOTERO_MCP_DATA_DIR: state,
      // Nothing of this machine's own Zotero or configuration.
      HOME: state,
      ...setup.env(base),
    },
    stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (chunk) => stderr.push(chunk));
  const client = new Client({ name: 'zotero-mcp-bench-desktop', version: '1.0.0' });
  const started = performance.now();
  await client.connect(transport, { timeout: TIMEOUT });
  const startMs = performance.now() - started;
  const close = async () => {
    await client.close();
    const text = Buffer.concat(stderr).toString('utf8');
    if (text) writeFileSync(join(LOG_DIR, `${setup.id}-${n}.stderr`), text);
  };
  return { client, close, stderr, startMs };
}

/** Fails with the answer and the server's stderr. */
function fail(server, setup, call, problem, result) {
  const text = (result?.content ?? []).map((c) => c.text ?? '').join('\n');
  const log = Buffer.concat(server.stderr).toString('utf8');
  throw new Error(`${setup.label}: ${call.name} answered ${problem}: ${text.slice(0, 600)}\nserver stderr:\n${log.slice(-2000)}`);
}

/**
 * One call, timed; for the read, the calls a full read of pages 1–5 takes (an answer cut by the server's text
 * budget, `truncated: true`, read on from the page after its last), timed together. Fails on an error answer or an
 * answer that is not the one expected: for the read, pages other than PAGES once it is done.
 */
async function timed(server, setup, call) {
  if (call === SEARCH) {
    const started = performance.now();
    const result = await server.client.callTool(call, { timeout: TIMEOUT });
    const ms = performance.now() - started;
    if (result.isError === true) fail(server, setup, call, 'an error', result);
    if (!(result.structuredContent?.items?.length >= 1)) fail(server, setup, call, 'no item', result);
    return ms;
  }
  const { fromPage, toPage } = READ.arguments;
  const pages = [];
  const texts = [];
  let calls = 0;
  const started = performance.now();
  for (let from = fromPage; ; ) {
    const result = await server.client.callTool(
      { ...READ, arguments: { ...READ.arguments, fromPage: from } },
      { timeout: TIMEOUT },
    );
    calls++;
    const out = result.structuredContent;
    if (result.isError === true) fail(server, setup, call, `an error (call ${calls}, fromPage ${from})`, result);
    if (out?.source !== setup.source) fail(server, setup, call, `source ${out?.source}, not ${setup.source}`, result);
    if (!(out.pages?.length >= 1) || out.pages[0] !== from) {
      fail(server, setup, call, `pages ${JSON.stringify(out.pages)} from page ${from}`, result);
    }
    pages.push(...out.pages);
    texts.push(out.text);
    const next = out.pages.at(-1) + 1;
    if (out.truncated !== true || next > toPage) break;
    from = next;
  }
  const ms = performance.now() - started;
  if (JSON.stringify(pages) !== JSON.stringify(PAGES)) {
    fail(server, setup, call, `pages ${JSON.stringify(pages)} in ${calls} call(s), not ${JSON.stringify(PAGES)}`);
  }
  if ((readCalls[setup.id] ??= calls) !== calls) {
    fail(server, setup, call, `a full read in ${calls} calls, where another took ${readCalls[setup.id]}`);
  }
  // The server's own page separator between the answers' texts.
  readText[setup.id] ??= texts.join('\n\n');
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Nearest rank. */
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(0.9 * xs.length) - 1];

/** The two setups in turn, the first one changing every round: load from elsewhere falls on both alike. */
const inTurn = (round) => (round % 2 ? [...setups].reverse() : setups);

/** Every setup's figures, measured in turn: cold rounds, then the warm runs, one call at a time. */
async function measure() {
  const figures = Object.fromEntries(
    setups.map((s) => [s.id, { cold: { search: [], read: [] }, uncached: [], warm: { search: [], read: [] }, starts: [] }]),
  );
  for (let round = 0; round < COLD_ROUNDS; round++) {
    for (const setup of inTurn(round)) {
      const f = figures[setup.id];
      // The read first on one fresh server, the search first on another (then the read, its pages not cached).
      let server = await start(setup);
      f.starts.push(server.startMs);
      try {
        f.cold.read.push(await timed(server, setup, READ));
      } finally {
        await server.close();
      }
      server = await start(setup);
      f.starts.push(server.startMs);
      try {
        f.cold.search.push(await timed(server, setup, SEARCH));
        f.uncached.push(await timed(server, setup, READ));
      } finally {
        await server.close();
      }
    }
  }
  const servers = Object.fromEntries(await Promise.all(setups.map(async (s) => [s.id, await start(s)])));
  try {
    for (const [label, call] of [
      ['search', SEARCH],
      ['read', READ],
    ]) {
      for (const setup of setups) for (let i = 0; i < WARMUPS; i++) await timed(servers[setup.id], setup, call);
      for (let i = 0; i < RUNS; i++) {
        for (const setup of inTurn(i)) figures[setup.id].warm[label].push(await timed(servers[setup.id], setup, call));
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.close()));
  }
  return figures;
}

async function counts(url, since) {
  const response = await fetch(`${url}/__counts?since=${since}`);
  return response.json();
}

/** Requests per call through the counting proxies: [cold, warm] per call, each `{proxy: n}`. */
async function countRequests(setup) {
  if (!setup.counting) return null;
  const { base, proxies } = setup.counting;
  const counted = async (server, call) => {
    const before = await Promise.all(proxies.map(([, url]) => counts(url, 0).then((c) => c.last)));
    await timed(server, setup, call);
    const after = await Promise.all(proxies.map(([, url], i) => counts(url, before[i])));
    return proxies.map(([name], i) => [name, after[i].entries.length]);
  };
  const last = () => Promise.all(proxies.map(([, url]) => counts(url, 0).then((c) => c.last)));
  const result = {};
  for (const [label, call] of [
    ['search', SEARCH],
    ['read', READ],
  ]) {
    const before = await last();
    const server = await start(setup, base);
    const after = await last();
    result.start = proxies.map(([name], i) => [name, after[i] - before[i]]);
    try {
      result[label] = { cold: await counted(server, call), warm: await counted(server, call) };
    } finally {
      await server.close();
    }
  }
  return result;
}

const fmt = (ms) => (ms === undefined ? '—' : `${ms.toFixed(1)} ms`);
const fmtCount = (c) => c.map(([name, n]) => `${n} ${name}`).join(' + ');

const started = performance.now();
const measured = await measure();
const results = {};
for (const setup of setups) results[setup.id] = { figures: measured[setup.id], requests: await countRequests(setup) };

console.log(
  `zotero-mcp serve --stdio, per call (the read: per full read of pages 1–5; client-side, through the stdio ` +
    `pipe): cold = first call of a fresh server ` +
    `(median of ${COLD_ROUNDS}); uncached = pages not in the KV yet, server already talked to Zotero; warm = ` +
    `median and p90 of ${RUNS} after ${WARMUPS} warm-ups`,
);
const rows = [['setup', 'call', 'cold', 'uncached', 'warm median', 'warm p90', 'requests cold → warm']];
for (const setup of setups) {
  const { figures, requests } = results[setup.id];
  for (const [label, call] of [
    ['search', SEARCH],
    ['read', READ],
  ]) {
    rows.push([
      setup.label,
      label === 'read' ? `${call.name} p.1–5${readCalls[setup.id] > 1 ? ` (${readCalls[setup.id]} calls)` : ''}` : call.name,
      fmt(median(figures.cold[label])),
      label === 'read' ? fmt(median(figures.uncached)) : '—',
      fmt(median(figures.warm[label])),
      fmt(p90(figures.warm[label])),
      requests ? `${fmtCount(requests[label].cold)} → ${fmtCount(requests[label].warm)}` : '(not counted)',
    ]);
  }
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const row of rows) console.log(`  ${row.map((cell, i) => cell.padEnd(widths[i])).join('  ')}`.trimEnd());

console.log('start-up, spawn to connected (initialize), median of every fresh server:');
for (const setup of setups) {
  const { figures, requests } = results[setup.id];
  const sent = requests ? `, ${fmtCount(requests.start)} requests` : '';
  console.log(`  ${setup.label}: ${fmt(median(figures.starts))}${sent}`);
}
console.log('local / Web:');
for (const label of ['search', 'read']) {
  const l = results.local.figures;
  const w = results.web.figures;
  const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
  const parts = [
    `cold ${ratio(median(l.cold[label]), median(w.cold[label]))}`,
    ...(label === 'read' ? [`uncached ${ratio(median(l.uncached), median(w.uncached))}`] : []),
    `warm median ${ratio(median(l.warm[label]), median(w.warm[label]))}`,
    `p90 ${ratio(p90(l.warm[label]), p90(w.warm[label]))}`,
  ];
  console.log(`  ${label === 'read' ? 'zotero_read_attachment' : 'zotero_search'}: ${parts.join(', ')}`);
}
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
console.log(
  `the read, pages ${PAGES.join(', ')}: ${setups
    .map((s) => `${readText[s.id].length} characters in ${plural(readCalls[s.id], 'call')} (${s.label})`)
    .join(', ')}`,
);
if (readText.local !== readText.web) console.log('  WARNING: the two setups read different texts');
console.log(`(${serverCount} servers started, ${((performance.now() - started) / 1000).toFixed(1)} s)`);

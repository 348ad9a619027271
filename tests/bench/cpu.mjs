// CPU milliseconds per MCP call of the release Worker, cold and warm, against Cloudflare's free plan (10 ms of CPU
// per request). Run by scripts/bench-cpu.sh (`make bench`), which starts the simulators and the metadata
// services' stand-in and sets SIM_URL, SOURCES_URL, SCALE_SIM_URL and CPU_STATE_DIR.
//
// How it is measured:
//   - build/ runs in Miniflare alone (the miniflare package wrangler brings: one workerd process, no wrangler proxy
//     and no inspector), with the bindings and [vars] of tests/e2e/wrangler.test.toml and the variables
//     scripts/servers.sh's start_worker adds; no AI Search (the e2e config's wrapper is left out).
//   - CPU is the sum over the workerd process's threads of /proc/<pid>/task/*/schedstat (ns on CPU), read before
//     a call and after its answer's last byte, once the process has gone quiet (work the call left running, a
//     waitUntil or V8's background compilation, is the call's). Calls are strictly sequential. Its main thread,
//     where the isolates run, is kept apart too ("main thread").
//   - The Worker's outbound requests go to `outboundService`, a Node function, so nothing upstream runs in
//     workerd: in a recording pass it forwards each request and keeps (method, URL, conditional headers, body) ->
//     (status, headers, body); reading calls are then measured on replayed answers (a request never seen is
//     forwarded and counted). Writing calls change the library, so their requests are forwarded live, every one.
//   - The floor: the same measurement for a request to a trivial Worker (tests/bench/floor-worker/index.mjs) in
//     the same kind of Miniflare instance, one right before every measured warm call; "own" is raw - floor. The
//     same Worker also prices an outbound request (it fetches once through the same outboundService), printed
//     beside each call's count of requests.
//   - Cold: the first call after a fresh Miniflare start (state persisted on disk, so one OAuth token serves every
//     start), median of COLD_ROUNDS starts; before it the local KV and D1 simulators are touched through
//     Miniflare's binding proxy (not through the Worker), so their own first request is not counted as ours.
//     Warm: BENCH_WARMUP unmeasured calls of the same request, then the median and 90th percentile of
//     BENCH_ROUNDS.
//   - A second part runs the whole-library tools over a synthetic library of SCALE_ITEMS items, its D1 mirror
//     filled first by scheduled runs (Miniflare's `getWorker().scheduled()`, which waits for the run's waitUntil).
//
// Local KV, the Durable Object and D1 run inside the same workerd process and their CPU is counted, where on
// Cloudflare they are other services: every figure is an upper bound of the Worker's own CPU.
//
// Environment knobs:
//   COLD_ROUNDS=3       fresh starts per call
//   BENCH_WARMUP=30     unmeasured calls before the measured ones, per call
//   BENCH_ROUNDS=40     measured warm calls, per call
//   CPU_CALLS="label,label"   only these calls (labels as printed; both parts)
//   SCALE_ITEMS=10000   the synthetic library's size (0: no second part; the script then starts no simulator
//                       for it)
//   CPU_WITHOUT_MIRROR=1  the Worker without MIRROR_DB (tools read Zotero, writes do not go through to D1): the
//                       mirror's share of the demo's calls; no second part
//   CPU_JSON=<file>     every figure and sample, as JSON
//   CPU_VARS="NAME=value ..."  more settings for the Worker (e.g. TOOL_GROUPS=read: a smaller tools/list)
//   CPU_DEADLINE_S=1500 the run's bound: past it, every instance is disposed and the run fails

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Miniflare, Response as MfResponse } from 'miniflare';

import { decodeResponse, legacyRequest, modernRequest, oauthFlow, textOf, WRITE_SCOPES } from '../e2e/helpers.mjs';

const ROOT = new URL('../../', import.meta.url);
const COLD_ROUNDS = Number(process.env.COLD_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const SCALE_ITEMS = Number(process.env.SCALE_ITEMS ?? 10000);
/** Without the mirror's D1 binding: what the mirror costs the demo's calls (its reads, and writes going through). */
const WITHOUT_MIRROR = process.env.CPU_WITHOUT_MIRROR === '1';
const ONLY = process.env.CPU_CALLS ? new Set(process.env.CPU_CALLS.split(',').map((s) => s.trim())) : undefined;
const { SIM_URL, SOURCES_URL, SCALE_SIM_URL, CPU_STATE_DIR, CPU_JSON } = process.env;
/** Cloudflare's free plan: CPU per request. */
const LIMIT_MS = 10;
const CALL_TIMEOUT_MS = 120_000;
/** The whole run's bound: the instances are disposed and the process exits after it, whatever happens. */
const DEADLINE_MS = Number(process.env.CPU_DEADLINE_S ?? 1500) * 1000;
const LIBRARY = 'users/1234567';
const API_KEY = 'demo';
const MARK = 'cpu-bench';

for (const [name, value] of Object.entries({ SIM_URL, CPU_STATE_DIR })) {
  if (!value) throw new Error(`${name} is not set: run this through scripts/bench-cpu.sh`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// CPU of a workerd process.

/** ns on CPU so far of every thread of `pid`, and of its main thread (schedstat's first field). */
function cpuOf(pid) {
  let all = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let ns;
    try {
      ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      continue; // the thread ended between the listing and the read
    }
    all += ns;
    if (tid === String(pid)) main = ns;
  }
  return { all, main };
}

/**
 * Waits until `pid` has gone quiet: less than `quietNs` of CPU over one `stepMs` (V8 compiles and collects on
 * background threads for a while after a call). Returns the CPU reading then.
 */
async function settle(pid, { quietNs = 20_000, stepMs = 2, maxMs = 300 } = {}) {
  const started = performance.now();
  let last = cpuOf(pid);
  for (;;) {
    await sleep(stepMs);
    const now = cpuOf(pid);
    if (now.all - last.all < quietNs || performance.now() - started > maxMs) return now;
    last = now;
  }
}

const childPids = () =>
  readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').split(/\s+/).filter(Boolean);

// ---------------------------------------------------------------------------------------------------------------
// Upstream: every outbound request of the Worker comes here (Miniflare's outboundService), in Node.

/** Request headers that change the answer: part of a recording's key. */
const KEY_HEADERS = ['if-modified-since-version', 'if-unmodified-since-version', 'if-match', 'if-none-match', 'range'];
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'accept-encoding']);
/** Node's fetch decompresses: the answer goes back without its encoding and length. */
const DROPPED_ANSWER_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The floor Worker's fetches that price an outbound request go to this host, answered here at once. */
const PRICE_HOST = 'cpu-bench.invalid';
const PRICE_LARGE_BYTES = 200_000;

const upstream = {
  /** record: forward and keep; replay: answer from the recording (else forward, counted); live: forward. */
  mode: 'live',
  recording: new Map(),
  counts: { recorded: 0, replayed: 0, unseen: 0, live: 0, bytes: 0 },
  unseen: [],
  requests: [],

  async handle(request) {
    const url = new URL(request.url);
    if (url.hostname === PRICE_HOST) return new MfResponse('x'.repeat(Number(url.searchParams.get('bytes') ?? 2)));
    const body = Buffer.from(await request.arrayBuffer());
    const headers = [...request.headers].filter(([name]) => !HOP_HEADERS.has(name));
    const key = [
      request.method,
      request.url,
      ...KEY_HEADERS.map((name) => `${name}:${request.headers.get(name) ?? ''}`),
      createHash('sha256').update(body).digest('hex'),
    ].join('\n');
    this.requests.push(`${request.method} ${request.url}`);
    let answer;
    if (this.mode === 'replay' && this.recording.has(key)) {
      this.counts.replayed += 1;
      answer = this.recording.get(key);
    } else {
      answer = await forward(request.method, request.url, headers, body);
      if (this.mode === 'record') {
        this.counts.recorded += 1;
        if (!this.recording.has(key)) this.recording.set(key, answer);
      } else if (this.mode === 'replay') {
        this.counts.unseen += 1;
        if (this.unseen.length < 20) this.unseen.push(`${request.method} ${request.url}`);
      } else {
        this.counts.live += 1;
      }
    }
    this.counts.bytes += answer.body.length;
    const empty = [101, 204, 205, 304].includes(answer.status) || request.method === 'HEAD';
    return new MfResponse(empty ? null : answer.body, { status: answer.status, headers: answer.headers });
  },
};

async function forward(method, url, headers, body) {
  const response = await fetch(url, {
    method,
    headers,
    body: body.length > 0 && !['GET', 'HEAD'].includes(method) ? body : undefined,
    // A redirect goes back to the Worker, whose fetch follows it with a request of its own.
    redirect: 'manual',
    signal: AbortSignal.timeout(60_000),
  });
  return {
    status: response.status,
    headers: [...response.headers].filter(([name]) => !DROPPED_ANSWER_HEADERS.has(name)),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Miniflare instances.

/** The [vars], compatibility date and flags of the e2e Worker config (tests/e2e/wrangler.test.toml). */
function e2eConfig() {
  const toml = readFileSync(new URL('tests/e2e/wrangler.test.toml', ROOT), 'utf8');
  const vars = {};
  const section = toml.split(/^\[vars\][ \t]*$/m)[1]?.split(/^\[/m)[0] ?? '';
  for (const match of section.matchAll(/^([A-Z_]+)\s*=\s*"([^"]*)"/gm)) vars[match[1]] = match[2];
  const date = toml.match(/^compatibility_date\s*=\s*"([^"]+)"/m)?.[1];
  const flags = [...(toml.match(/^compatibility_flags\s*=\s*\[([^\]]*)\]/m)?.[1] ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  assert.ok(date, 'compatibility_date in tests/e2e/wrangler.test.toml');
  return { vars, date, flags };
}

const E2E = e2eConfig();

/** workerd's stdout and stderr, the last lines kept to explain a failure. */
const runtimeLog = [];
function keepRuntimeOutput(stdout, stderr) {
  for (const stream of [stdout, stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      runtimeLog.push(...chunk.split('\n').filter(Boolean));
      runtimeLog.splice(0, Math.max(0, runtimeLog.length - 50));
    });
  }
}

function workerOptions(apiBase, persistRoot) {
  return {
    modules: true,
    scriptPath: 'build/worker/shim.mjs',
    modulesRoot: 'build',
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: E2E.date,
    compatibilityFlags: E2E.flags,
    kvNamespaces: ['OAUTH_KV', 'CACHE_KV'],
    durableObjects: { ATTEMPT_COUNTERS: { className: 'AttemptCounters', useSQLite: true } },
    d1Databases: WITHOUT_MIRROR ? [] : ['MIRROR_DB'],
    defaultPersistRoot: persistRoot,
    bindings: {
      ...E2E.vars,
      // What scripts/servers.sh's start_worker adds.
      ZOTERO_API_BASE: apiBase,
      ZOTERO_API_KEY: API_KEY,
      ZOTERO_LIBRARY_ID: '1234567',
      UNLIMITED_REGISTRATION: '1',
      FILE_STORAGE: 'zotero',
      ...(SOURCES_URL ? { SOURCES_TEST_BASE_URL: SOURCES_URL } : {}),
      // CPU_VARS="NAME=value ...": more settings for this run (e.g. TOOL_GROUPS=read, a smaller catalogue).
      ...Object.fromEntries(
        (process.env.CPU_VARS ?? '')
          .split(/\s+/)
          .filter(Boolean)
          .map((pair) => pair.split(/=(.*)/s).slice(0, 2)),
      ),
    },
    outboundService: (request) => upstream.handle(request),
    handleRuntimeStdio: keepRuntimeOutput,
  };
}

const FLOOR_OPTIONS = {
  modules: true,
  scriptPath: 'tests/bench/floor-worker/index.mjs',
  compatibilityDate: E2E.date,
  compatibilityFlags: E2E.flags,
  // Its fetches (x-floor-fetch) take the same way out as the Worker's: what an outbound request costs in workerd.
  outboundService: (request) => upstream.handle(request),
  handleRuntimeStdio: keepRuntimeOutput,
};

const live = new Set();
/** Every workerd this run started: any still there at the end is stopped (a disposal that failed leaves none). */
const spawned = new Set();

class Instance {
  constructor(name, options) {
    this.name = name;
    this.options = options;
  }

  /** Starts Miniflare and finds its workerd: the one child process of this node that was not there before. */
  async start() {
    const before = new Set(childPids());
    this.mf = new Miniflare(this.options);
    live.add(this);
    this.url = await this.mf.ready;
    const started = childPids().filter((pid) => !before.has(pid));
    const workerd = started.filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'workerd');
    assert.equal(workerd.length, 1, `${this.name}: one new workerd process, found ${started.join(', ')}`);
    this.pid = workerd[0];
    spawned.add(this.pid);
    if (this.options.kvNamespaces) {
      // The local KV and D1 simulators are workers of their own in this workerd: their first request is served
      // here, through Miniflare's binding proxy, not through our Worker, whose isolate stays untouched.
      for (const name of this.options.kvNamespaces) await (await this.mf.getKVNamespace(name)).get('cpu-bench-warm');
      for (const name of this.options.d1Databases) await (await this.mf.getD1Database(name)).prepare('SELECT 1').first();
    }
    await settle(this.pid, { quietNs: 200_000, stepMs: 50, maxMs: 5000 });
    return this;
  }

  async restart() {
    await this.dispose();
    return this.start();
  }

  async dispose() {
    if (!this.mf) return;
    live.delete(this);
    const mf = this.mf;
    this.mf = undefined;
    await mf.dispose();
  }

  mcpUrl() {
    return new URL('/mcp', this.url).href;
  }
}

async function disposeAll() {
  for (const instance of [...live]) await instance.dispose().catch(() => undefined);
  for (const pid of spawned) {
    try {
      // Still ours: a workerd whose parent is this process, or that lost it and runs in our directory.
      const ppid = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1];
      const ours = ppid === String(process.pid) || (ppid === '1' && readlinkSync(`/proc/${pid}/cwd`) === process.cwd());
      if (ours && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'workerd') process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    disposeAll().finally(() => process.exit(1));
  });
}
setTimeout(() => {
  console.error(`bench-cpu: still running after ${DEADLINE_MS / 1000} s: stopping`);
  disposeAll().finally(() => process.exit(1));
}, DEADLINE_MS).unref();

// ---------------------------------------------------------------------------------------------------------------
// Exchanges.

const ELICITS = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
/** A host that draws MCP Apps panels (docs/apps.md). */
const DRAWS_PANELS = {
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
  },
};

/** The HTTP request of a call: the 2025 form for `legacy`, else 2026-07-28 (the client elicits when `asks`). */
function httpRequest(call, ctx) {
  const spec = call.request(ctx);
  const headers = { authorization: `Bearer ${ctx.token}` };
  if (spec.era === 'legacy') return legacyRequest(spec.method, spec.params, { headers });
  const meta = spec.asks ? ELICITS : spec.apps ? DRAWS_PANELS : {};
  return modernRequest(spec.method, spec.params ?? {}, { headers, meta });
}

/** Why an answer is not the one expected, or undefined. */
function failure(call, res) {
  if (res.status !== 200) return `HTTP ${res.status}`;
  if (!res.json) return 'no JSON-RPC answer';
  if (res.json.error) return `JSON-RPC error ${JSON.stringify(res.json.error).slice(0, 300)}`;
  const result = res.json.result;
  if (call.question) return result?.resultType === 'input_required' ? undefined : `not a question: ${JSON.stringify(result).slice(0, 300)}`;
  if (result?.resultType === 'input_required') return 'asked for confirmation';
  if (Boolean(result?.isError) !== Boolean(call.expectError)) return `isError ${Boolean(result?.isError)}: ${textOf(result ?? {}).slice(0, 400)}`;
  return undefined;
}

/**
 * One exchange with `instance`, its CPU measured: from just before the request to the answer's last byte and the
 * process quiet again. Returns { all, main } in ms, and the decoded answer.
 */
async function measured(instance, { headers, body }) {
  const before = cpuOf(instance.pid);
  const response = await fetch(instance.mcpUrl(), {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await response.text();
  const after = await settle(instance.pid);
  const received = new Response(text === '' ? null : text, { status: response.status, headers: response.headers });
  const decoded = await decodeResponse(received);
  return { all: (after.all - before.all) / 1e6, main: (after.main - before.main) / 1e6, ...decoded };
}

/** A call of `call` (already prepared), checked; its CPU measured. `request`: when the floor was sent the same. */
async function callOnce(instance, call, ctx, request = httpRequest(call, ctx)) {
  const res = await measured(instance, request);
  const why = failure(call, res);
  if (why) throw new Error(`${call.label}: ${why}\n${res.text.slice(0, 600)}\nworkerd: ${runtimeLog.slice(-10).join('\n')}`);
  call.check?.(res.json.result, ctx);
  return res;
}

/** An unmeasured tool call through the Worker (a call's preparation), checked; its structured result. */
async function tool(ctx, name, args, { asks = false } = {}) {
  const call = { label: `(setup) ${name}`, question: asks, request: () => ({ method: 'tools/call', params: { name, arguments: args }, asks }) };
  const res = await callOnce(ctx.instance, call, ctx);
  return res.json.result;
}

/** The floor: the same request to the trivial Worker. */
async function floorOnce(floor, request) {
  const res = await measured(floor, request);
  if (res.status !== 200) throw new Error(`floor: HTTP ${res.status}`);
  return res;
}

// ---------------------------------------------------------------------------------------------------------------
// The calls.

// The demo library (crates/sim/demo/library.json): a paper with a PDF carrying annotations and a note, and the
// llncs instructions (a 230 KB PDF of 7 pages on the simulator's Zotero Storage) with its parent.
const PAPER = 'T6W7H8UE';
const LLNCS_PDF = 'Z36ESMED';
const LLNCS_PARENT = '2F8HNRI6';
const DOI = '10.1371/journal.pone.0000030';
const manuscript = (name) => readFileSync(new URL(`crates/server/tests/refcheck/${name}`, ROOT), 'utf8');
const SAMPLE_PDF = readFileSync(new URL('crates/sim/demo/files/shortsample.pdf', ROOT)).toString('base64');
/** Renaming takes turns between these two, so that every call renames. */
const TEMPLATES = ['{{ firstCreator suffix=" - " }}{{ year }}', '{{ year suffix=" - " }}{{ firstCreator }}'];

const rpc = (label, era, method, params, options = {}) => ({ label, request: () => ({ era, method, params, apps: options.apps }) });
/** A tools/call; `args` may be a function of the context (what the preparation left there). */
const call = (label, name, args, options = {}) => ({
  label,
  tool: name,
  ...options,
  request: (ctx) => ({
    method: 'tools/call',
    params: { name, arguments: typeof args === 'function' ? args(ctx) : args, ...(options.extra?.(ctx) ?? {}) },
    asks: options.asks,
    apps: options.apps,
  }),
});

/** Deletes the cached page texts (CACHE_KV `text:` keys), through the binding proxy, so the next read extracts. */
async function forgetPageTexts(ctx) {
  const kv = await ctx.instance.mf.getKVNamespace('CACHE_KV');
  for (let cursor; ; ) {
    const page = await kv.list({ prefix: 'text:', cursor });
    for (const { name } of page.keys) await kv.delete(name);
    if (page.list_complete) break;
    cursor = page.cursor;
  }
  await settle(ctx.instance.pid);
}

const READ_PAGES = { itemKey: LLNCS_PDF, fromPage: 1, toPage: 5 };

/** The demo part's calls that change nothing in the library: measured on replayed answers. */
const DEMO_READS = [
  rpc('initialize (2025-06-18)', 'legacy', 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'zotero-mcp-bench', version: '1.0.0' },
  }),
  rpc('tools/list', 'modern', 'tools/list', {}),
  rpc('server/discover', 'modern', 'server/discover', {}),
  // A host that draws panels (docs/apps.md): its catalogue, with the panels' _meta, and the PDF the evidence reader
  // draws. A panel's resources/read is not here: it reads the static assets, which Miniflare serves through a
  // router Worker that would add its own CPU to every call of this bench (on Cloudflare it is not the Worker's).
  rpc('tools/list (draws panels)', 'modern', 'tools/list', {}, { apps: true }),
  call('zotero_attachment_file (230 KB PDF)', 'zotero_attachment_file', { key: LLNCS_PDF }, { apps: true }),
  call('zotero_search "urban" (5)', 'zotero_search', { query: 'urban', limit: 5 }),
  call('zotero_search (25 items)', 'zotero_search', { limit: 25 }),
  call('zotero_get_item with children', 'zotero_get_item', { key: PAPER, includeChildren: true }),
  call('zotero_list_collections', 'zotero_list_collections', {}),
  call('zotero_list_tags', 'zotero_list_tags', {}),
  call('zotero_notes list', 'zotero_notes', { action: 'list', itemKey: PAPER }),
  call('zotero_annotations list', 'zotero_annotations', { itemKey: PAPER }),
  call('zotero_read_attachment p. 1-5 (first read)', 'zotero_read_attachment', READ_PAGES, {
    prepare: forgetPageTexts,
    perPage: true,
  }),
  call('zotero_read_attachment p. 1-5 (cached)', 'zotero_read_attachment', READ_PAGES, { perPage: true }),
  call('zotero_list_libraries', 'zotero_list_libraries', {}),
  call('zotero_changes', 'zotero_changes', {}),
  call('zotero_retrieve (1 item)', 'zotero_retrieve', { itemKeys: [PAPER], query: 'protein structure prediction from single sequences' }),
  call('zotero_check_references (9 refs)', 'zotero_check_references', { text: manuscript('manuscript.tex'), bibtex: manuscript('manuscript.bib'), limit: 60 }),
  call('zotero_find_duplicates (dry run)', 'zotero_find_duplicates', {}),
  call('zotero_rename_attachments (dry run)', 'zotero_rename_attachments', { itemKeys: [LLNCS_PARENT] }),
  call('search (ChatGPT)', 'search', { query: 'protein structure prediction' }, {
    check: (result, ctx) => {
      ctx.fetchId ??= result.structuredContent.results[0]?.id;
    },
  }),
  call('fetch (ChatGPT)', 'fetch', (ctx) => ({ id: ctx.fetchId })),
  call('zotero_semantic_search (no AI Search)', 'zotero_semantic_search', { query: 'protein folding' }, { expectError: true }),
  call('zotero_reindex (no AI Search)', 'zotero_reindex', {}),
];

const articleArgs = (title, extra = {}) => ({
  items: [{ itemType: 'journalArticle', title, creators: [{ firstName: 'Eve', lastName: 'Tester' }], tags: [{ tag: MARK }], fields: { date: '2024' }, ...extra }],
});
const created = async (ctx, title, count = 1) => {
  const args = articleArgs(title);
  args.items = Array.from({ length: count }, () => args.items[0]);
  const keys = (await tool(ctx, 'zotero_create_items', args)).structuredContent.created;
  assert.equal(keys.length, count);
  return keys;
};
const next = (ctx) => (ctx.n = (ctx.n ?? 0) + 1);
const ACCEPT = { confirm: { action: 'accept', content: { confirm: true } } };

/**
 * The writing calls: measured live (each request forwarded), what each needs made just before it by unmeasured
 * calls through the Worker (so the mirror stays in step, as after any call of this server). A client that
 * declares no elicitation, as the e2e tests' clients, runs a destructive write at once; zotero_delete_items is
 * also measured as the question a client that elicits gets, and as that question's confirmed answer.
 */
const DEMO_WRITES = [
  call('zotero_create_items (1 article)', 'zotero_create_items', articleArgs('CPU bench: a new article')),
  call('zotero_update_item (a field and a tag)', 'zotero_update_item', (ctx) => ({ keys: [ctx.target], fields: { date: String(1800 + next(ctx)) }, addTags: [`${MARK}-updated`] })),
  call('zotero_delete_items (asked)', 'zotero_delete_items', (ctx) => ({ keys: [ctx.target] }), { asks: true, question: true }),
  call('zotero_delete_items (confirmed)', 'zotero_delete_items', (ctx) => ({ keys: [ctx.doomed] }), {
    asks: true,
    async prepare(ctx) {
      [ctx.doomed] = await created(ctx, 'CPU bench: deleted on yes');
      ctx.state = (await tool(ctx, 'zotero_delete_items', { keys: [ctx.doomed] }, { asks: true })).requestState;
    },
    extra: (ctx) => ({ requestState: ctx.state, inputResponses: ACCEPT }),
  }),
  call('zotero_manage_collections create', 'zotero_manage_collections', (ctx) => ({ action: 'create', name: `${MARK} ${next(ctx)}` })),
  call('zotero_manage_collections delete', 'zotero_manage_collections', (ctx) => ({ action: 'delete', collectionKey: ctx.collection }), {
    async prepare(ctx) {
      ctx.collection = (await tool(ctx, 'zotero_manage_collections', { action: 'create', name: `${MARK} doomed ${next(ctx)}` })).structuredContent.collectionKey;
    },
  }),
  call('zotero_notes create', 'zotero_notes', (ctx) => ({ action: 'create', itemKey: ctx.target, note: 'Some **bold** words.\n\n- a point\n- another' })),
  call('zotero_notes append', 'zotero_notes', (ctx) => ({ action: 'update', itemKey: ctx.note, note: 'Follow-up planned.', append: true })),
  call('zotero_notes delete', 'zotero_notes', (ctx) => ({ action: 'delete', itemKey: ctx.doomedNote }), {
    async prepare(ctx) {
      ctx.doomedNote = (await tool(ctx, 'zotero_notes', { action: 'create', itemKey: ctx.target, note: 'To be trashed.' })).structuredContent.noteKey;
    },
  }),
  call('zotero_annotations create (highlight)', 'zotero_annotations', (ctx) => ({ action: 'create', itemKey: LLNCS_PDF, page: 1, text: ctx.quote, comment: MARK })),
  call('zotero_put_attachment (68 KB PDF)', 'zotero_put_attachment', (ctx) => ({ parentItemKey: ctx.target, base64Data: SAMPLE_PDF, filename: 'cpu bench.pdf' })),
  call('zotero_delete_attachment (permanent)', 'zotero_delete_attachment', (ctx) => ({ attachmentKey: ctx.doomedFile, permanent: true }), {
    async prepare(ctx) {
      ctx.doomedFile = (await tool(ctx, 'zotero_put_attachment', { parentItemKey: ctx.target, base64Data: SAMPLE_PDF, filename: 'doomed.pdf' })).structuredContent.attachmentKey;
    },
  }),
  call('zotero_rename_attachments (apply 1)', 'zotero_rename_attachments', (ctx) => ({ itemKeys: [ctx.renamed], template: TEMPLATES[(ctx.renames = (ctx.renames ?? 0) + 1) % 2], apply: true }), {
    check: (result) => assert.equal(result.structuredContent.planned[0]?.status, 'renamed', JSON.stringify(result.structuredContent)),
  }),
  call('zotero_import_reference (DOI with PDF)', 'zotero_import_reference', { identifier: `doi:${DOI}`, allowDuplicate: true }),
  call('zotero_find_duplicates (merge 2)', 'zotero_find_duplicates', (ctx) => ({ mergeKeys: ctx.pair, merge: true }), {
    async prepare(ctx) {
      ctx.pair = await created(ctx, `CPU bench: twins ${next(ctx)}`, 2);
    },
  }),
  call('zotero_undo (an update)', 'zotero_undo', (ctx) => ({ id: ctx.undoId }), {
    async prepare(ctx) {
      const updated = await tool(ctx, 'zotero_update_item', { keys: [ctx.target], fields: { date: String(1800 + next(ctx)) } });
      ctx.undoId = textOf(updated).match(/zotero_undo with id "([0-9a-z]+-[0-9a-f]{4})"/)?.[1];
      assert.ok(ctx.undoId, textOf(updated));
    },
  }),
  call('zotero_undo list', 'zotero_undo', { limit: 10 }),
  call('zotero_export_link list', 'zotero_export_link', { action: 'list' }),
  call('zotero_export_link create', 'zotero_export_link', { format: 'bibtex', label: MARK }),
];

/** What the writing calls work on, made once through the Worker. */
async function writeSetup(ctx) {
  [ctx.target] = await created(ctx, 'CPU bench: the article written to');
  ctx.note = (await tool(ctx, 'zotero_notes', { action: 'create', itemKey: ctx.target, note: 'Appended to.' })).structuredContent.noteKey;
  const [parent] = await created(ctx, 'CPU bench: renamed files');
  ctx.renamed = (await tool(ctx, 'zotero_put_attachment', { parentItemKey: parent, base64Data: SAMPLE_PDF, filename: 'renamed.pdf' })).structuredContent.attachmentKey;
  // Six words in a row from page 1, as a model would quote them.
  const page = await tool(ctx, 'zotero_read_attachment', { itemKey: LLNCS_PDF, fromPage: 1, toPage: 1 });
  const line = page.structuredContent.text.split('\n').map((l) => l.trim()).find((l) => l.split(/\s+/).length >= 6 && /^[A-Za-z ,.]+$/.test(l));
  assert.ok(line, page.structuredContent.text.slice(0, 300));
  ctx.quote = line.split(/\s+/).slice(0, 6).join(' ');
  for (let i = 0; i < 3; i++) await tool(ctx, 'zotero_export_link', { format: 'csljson', label: `${MARK} ${i}` });
}

/** The whole-library tools over the synthetic library (as tests/bench/scale.mjs calls them). */
function scaleCalls(sample) {
  const dois = sample.map((item) => item.data.DOI).filter(Boolean);
  assert.equal(dois.length, 20, 'every sampled item has a DOI');
  const fromMirror = (result) => assert.equal(result.structuredContent.mirror?.complete, true, JSON.stringify(result.structuredContent).slice(0, 300));
  return [
    call('zotero_find_duplicates', 'zotero_find_duplicates', {}, { check: fromMirror }),
    call('zotero_list_tags', 'zotero_list_tags', {}, { check: fromMirror }),
    call('zotero_list_collections', 'zotero_list_collections', {}, { check: fromMirror }),
    call('zotero_search (a title)', 'zotero_search', { query: sample[7].data.title }, {
      check: (result) => assert.ok(result.structuredContent.items.length >= 1),
    }),
    call('zotero_check_references (20 DOIs)', 'zotero_check_references', { text: dois.join('\n'), checkRegistry: false, checkSupport: false, limit: 20 }, {
      check: (result) => assert.equal(result.structuredContent.counts.matched, 20, JSON.stringify(result.structuredContent.counts)),
    }),
  ];
}

/** `count` regular items spread over the synthetic library, read from the simulator itself. */
async function spreadItems(apiBase, size, count) {
  const items = [];
  for (let at = 0; items.length < count; at++) {
    const start = Math.floor(((at + 0.5) * size) / count);
    const response = await fetch(`${apiBase}/${LIBRARY}/items/top?limit=1&start=${start}&sort=dateAdded&direction=asc`, {
      headers: { 'zotero-api-key': API_KEY, 'zotero-api-version': '3' },
      signal: AbortSignal.timeout(60_000),
    });
    assert.equal(response.status, 200, `the synthetic library's item ${start}`);
    items.push((await response.json())[0]);
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------------
// Rounds.

const chosen = (calls) => calls.filter((c) => !ONLY || ONLY.has(c.label));

/** Scheduled runs until one reads nothing since version 0 (the mirror's first fill is done). */
async function fillMirror(ctx) {
  for (let run = 1; run <= 60; run++) {
    const seen = upstream.requests.length;
    const worker = await ctx.instance.mf.getWorker();
    const { outcome } = await worker.scheduled({ cron: '17 */6 * * *' });
    assert.equal(outcome, 'ok', `scheduled run ${run}: ${runtimeLog.slice(-10).join('\n')}`);
    await settle(ctx.instance.pid);
    if (!upstream.requests.slice(seen).some((r) => /[?&]since=0(&|$)/.test(r))) return run - 1;
  }
  throw new Error('the mirror was not filled after 60 scheduled runs');
}

function upstreamDelta(before) {
  return Object.fromEntries(Object.entries(upstream.counts).map(([k, v]) => [k, v - before[k]]));
}

/** Cold: per call, COLD_ROUNDS fresh starts, each followed by that call alone (prepared in the instance before). */
async function coldRounds(ctx, calls, results) {
  for (const c of calls) {
    const entry = results.get(c.label);
    for (let round = 0; round < COLD_ROUNDS; round++) {
      await c.prepare?.(ctx);
      await ctx.instance.restart();
      const counts = { ...upstream.counts };
      const res = await callOnce(ctx.instance, c, ctx);
      entry.cold.push({ all: res.all, main: res.main });
      entry.pages ??= pagesOf(c, res);
      addCounts(entry, upstreamDelta(counts));
      entry.calls += 1;
    }
    console.error(`  cold ${c.label}: ${entry.cold.map((s) => s.all.toFixed(1)).join(' ')} ms`);
  }
}

/** Warm: one instance; per call, BENCH_WARMUP unmeasured calls, then BENCH_ROUNDS measured, each after a floor call. */
async function warmRounds(ctx, floor, calls, results, floorSamples) {
  await ctx.instance.restart();
  for (const c of calls) {
    const entry = results.get(c.label);
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      await c.prepare?.(ctx);
      // Built once: the arguments of some calls change from one call to the next.
      const request = httpRequest(c, ctx);
      const floorRes = await floorOnce(floor, request);
      const counts = { ...upstream.counts };
      const res = await callOnce(ctx.instance, c, ctx, request);
      if (i < WARMUP) continue;
      floorSamples.push({ all: floorRes.all, main: floorRes.main });
      entry.warm.push({ all: res.all, main: res.main });
      entry.pages ??= pagesOf(c, res);
      addCounts(entry, upstreamDelta(counts));
      entry.calls += 1;
    }
    const f = figures(entry.warm.map((s) => s.all));
    console.error(`  warm ${c.label}: median ${f.median.toFixed(2)} ms, p90 ${f.p90.toFixed(2)} ms`);
  }
}

function pagesOf(c, res) {
  return c.perPage ? res.json.result.structuredContent.pages?.length : undefined;
}

function addCounts(entry, counts) {
  for (const [k, v] of Object.entries(counts)) entry.upstream[k] = (entry.upstream[k] ?? 0) + v;
}

function newResults(calls, mode) {
  return new Map(calls.map((c) => [c.label, { label: c.label, tool: c.tool, mode, cold: [], warm: [], upstream: {}, calls: 0 }]));
}

async function demoPart(floor, floorSamples) {
  const persist = join(CPU_STATE_DIR, 'demo');
  rmSync(persist, { recursive: true, force: true });
  const ctx = { instance: await new Instance('worker', workerOptions(SIM_URL, persist)).start() };
  process.env.MCP_URL = ctx.instance.mcpUrl(); // helpers.mjs finds the server through it
  // Not bound to a resource: every fresh start listens on another port.
  ctx.token = (await oauthFlow(WRITE_SCOPES, { bound: false })).access_token;
  upstream.mode = 'live';
  const runs = await fillMirror(ctx);
  console.error(`demo: the mirror filled in ${runs} scheduled run(s)`);

  const reads = chosen(DEMO_READS);
  const writes = chosen(DEMO_WRITES);
  const results = new Map([...newResults(reads, 'replay'), ...newResults(writes, 'live')]);
  const catalogue = (await callOnce(ctx.instance, rpc('tools/list', 'modern', 'tools/list', {}), ctx)).json.result.tools.map((t) => t.name);

  // Recording: each reading call once, every answer kept.
  upstream.mode = 'record';
  for (const c of reads) {
    await c.prepare?.(ctx);
    await callOnce(ctx.instance, c, ctx);
  }
  upstream.mode = 'replay';
  await coldRounds(ctx, reads, results);
  await warmRounds(ctx, floor, reads, results, floorSamples);

  upstream.mode = 'live';
  if (writes.length) {
    await writeSetup(ctx);
    await coldRounds(ctx, writes, results);
    await warmRounds(ctx, floor, writes, results, floorSamples);
  }
  await ctx.instance.dispose();
  return { results: [...results.values()], catalogue, fillRuns: runs };
}

async function scalePart(floor, floorSamples) {
  const persist = join(CPU_STATE_DIR, 'scale');
  rmSync(persist, { recursive: true, force: true });
  const sample = await spreadItems(SCALE_SIM_URL, SCALE_ITEMS, 20);
  const calls = chosen(scaleCalls(sample));
  if (calls.length === 0) return undefined;
  const ctx = { instance: await new Instance('worker', workerOptions(SCALE_SIM_URL, persist)).start() };
  process.env.MCP_URL = ctx.instance.mcpUrl();
  ctx.token = (await oauthFlow(WRITE_SCOPES, { bound: false })).access_token;
  upstream.mode = 'live';
  const started = performance.now();
  const runs = await fillMirror(ctx);
  console.error(`scale: ${SCALE_ITEMS} items, the mirror filled in ${runs} scheduled runs (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  const results = newResults(calls, 'replay');
  upstream.mode = 'record';
  for (const c of calls) await callOnce(ctx.instance, c, ctx);
  upstream.mode = 'replay';
  await coldRounds(ctx, calls, results);
  await warmRounds(ctx, floor, calls, results, floorSamples);
  await ctx.instance.dispose();
  return { results: [...results.values()], fillRuns: runs };
}

// ---------------------------------------------------------------------------------------------------------------
// Figures and tables.

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  return sorted[lo] + (sorted[Math.ceil(at)] - sorted[lo]) * (at - lo);
}

function figures(values) {
  return { median: quantile(values, 0.5), p90: quantile(values, 0.9) };
}

const ms = (value) => (Number.isFinite(value) ? value.toFixed(2) : '-');

/** Within 10 ms of our own CPU (the floor taken off) cold and at the warm p90; or warm only; or not. */
function fits(coldOwn, p90Own) {
  if (!Number.isFinite(p90Own)) return '-';
  if (p90Own > LIMIT_MS) return 'no';
  if (Number.isFinite(coldOwn) && coldOwn > LIMIT_MS) return 'warm only';
  return 'yes';
}

function rowsOf(entries, floor) {
  const rows = [];
  for (const e of entries) {
    const cold = quantile(e.cold.map((s) => s.all), 0.5);
    const warm = figures(e.warm.map((s) => s.all));
    const main = { cold: quantile(e.cold.map((s) => s.main), 0.5), warm: quantile(e.warm.map((s) => s.main), 0.5) };
    const requests = e.calls ? ((e.upstream.replayed ?? 0) + (e.upstream.unseen ?? 0) + (e.upstream.live ?? 0)) / e.calls : NaN;
    rows.push({
      label: e.label,
      cold,
      median: warm.median,
      p90: warm.p90,
      own: warm.median - floor.warm,
      fits: fits(cold - floor.cold, warm.p90 - floor.warm),
      main,
      requests,
    });
    if (e.pages) {
      // Per page read: the call's own CPU (the floor taken off) over the pages its answer holds.
      const per = (value, off) => (value - off) / e.pages;
      rows.push({
        label: `  per page, floor off (${e.pages} pages)`,
        cold: per(cold, floor.cold),
        median: per(warm.median, floor.warm),
        p90: per(warm.p90, floor.warm),
        own: per(warm.median, floor.warm),
        fits: '',
        main: { cold: per(main.cold, floor.coldMain), warm: per(main.warm, floor.warmMain) },
        requests: NaN,
      });
    }
  }
  return rows;
}

const count = (value) => (Number.isFinite(value) ? String(Math.round(value * 10) / 10) : '');

function table(title, rows) {
  const lines = [
    title,
    '',
    '| call | cold ms | warm median ms | warm p90 ms | own warm (− floor) | fits 10 ms? | main thread: cold · warm median | requests |',
    '|---|---:|---:|---:|---:|:-:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.label} | ${ms(r.cold)} | ${ms(r.median)} | ${ms(r.p90)} | ${ms(r.own)} | ${r.fits} | ${ms(r.main.cold)} · ${ms(r.main.warm)} | ${count(r.requests)} |`);
  }
  return lines.join('\n');
}

function upstreamNote(entries) {
  const sum = (mode, key) => entries.filter((e) => e.mode === mode).reduce((s, e) => s + (e.upstream[key] ?? 0), 0);
  const strays = entries.filter((e) => e.mode === 'replay' && e.upstream.unseen).map((e) => `${e.label} (${e.upstream.unseen})`);
  return [
    `upstream, replayed calls: ${sum('replay', 'replayed')} answers replayed, ${sum('replay', 'unseen')} requests never recorded (forwarded)${strays.length ? `: ${strays.join(', ')}` : ''}`,
    `upstream, writing calls: ${sum('live', 'live')} requests forwarded live`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// The run.

async function run() {
  const floor = await new Instance('floor', FLOOR_OPTIONS).start();
  const floorCold = [];
  const floorCall = rpc('floor', 'modern', 'tools/list', {});
  const floorCtx = { token: 'floor' };
  for (let round = 0; round < COLD_ROUNDS; round++) {
    await floor.restart();
    floorCold.push(await floorOnce(floor, httpRequest(floorCall, floorCtx)));
  }

  /**
   * What an outbound request costs in workerd here: the floor Worker fetching once (2 bytes, then 200 KB) through
   * the same outboundService, against the floor itself. Interleaved, after BENCH_WARMUP unmeasured rounds.
   */
  async function fetchPrice() {
    const request = httpRequest(floorCall, floorCtx);
    const kinds = {
      plain: {},
      small: { 'x-floor-fetch': `http://${PRICE_HOST}/small` },
      large: { 'x-floor-fetch': `http://${PRICE_HOST}/large?bytes=${PRICE_LARGE_BYTES}` },
    };
    const samples = { plain: [], small: [], large: [] };
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      for (const [kind, headers] of Object.entries(kinds)) {
        const res = await floorOnce(floor, { ...request, headers: { ...request.headers, ...headers } });
        if (i >= WARMUP) samples[kind].push(res.all);
      }
    }
    const [plain, small, large] = ['plain', 'small', 'large'].map((kind) => quantile(samples[kind], 0.5));
    return { request: small - plain, per100KB: ((large - small) * 100_000) / PRICE_LARGE_BYTES, samples };
  }
  const price = await fetchPrice();

  const floorSamples = [];
  const demo = await demoPart(floor, floorSamples);
  // The whole-library tools answer from the mirror only: no second part without it.
  const scale = SCALE_ITEMS > 0 && SCALE_SIM_URL && !WITHOUT_MIRROR ? await scalePart(floor, floorSamples) : undefined;
  await floor.dispose();
  await disposeAll();

  const floorFigures = {
    cold: quantile(floorCold.map((s) => s.all), 0.5),
    coldMain: quantile(floorCold.map((s) => s.main), 0.5),
    warm: quantile(floorSamples.map((s) => s.all), 0.5),
    warmP90: quantile(floorSamples.map((s) => s.all), 0.9),
    warmMain: quantile(floorSamples.map((s) => s.main), 0.5),
  };

  const measuredTools = new Set(demo.results.map((e) => e.tool).filter(Boolean));
  const fixtures = demo.catalogue.filter((name) => name.startsWith('fixture_'));
  const notMeasured = demo.catalogue.filter((name) => !measuredTools.has(name) && !fixtures.includes(name));

  console.log(`\nCPU per call of the release Worker (build/) in Miniflare alone, workerd's every thread (schedstat);`);
  console.log(`cold: median of ${COLD_ROUNDS} fresh starts; warm: ${ROUNDS} calls after ${WARMUP} unmeasured, median and p90.`);
  console.log(`"fits": within ${LIMIT_MS} ms with the floor taken off, cold and at the warm p90 ("warm only": not cold).`);
  console.log('Local KV, the Durable Object and D1 run in the same workerd and are counted: an upper bound.\n');
  console.log(table(`Demo library (zotero-sim --demo, files on its Zotero Storage)${WITHOUT_MIRROR ? ', without MIRROR_DB' : ''}`, rowsOf(demo.results, floorFigures)));
  console.log(`\n${upstreamNote(demo.results)}`);
  console.log(
    'writing calls: live on the demo library after the reading calls; what each needs (an item, a note, a file, a ' +
      'collection, a pair of copies, a question) made just before it by unmeasured calls through the Worker. ' +
      'zotero_delete_items as asked (a client that elicits: the question) and confirmed (its answer); the other ' +
      'destructive writes as a client that declares no elicitation calls them (run at once).',
  );
  if (notMeasured.length) console.log(`tools listed but not measured: ${notMeasured.join(', ')}`);
  if (fixtures.length) console.log(`test fixtures listed (ENABLE_TEST_FIXTURES of the e2e config), not measured: ${fixtures.join(', ')}`);
  if (scale) {
    console.log(`\n${table(`Synthetic library of ${SCALE_ITEMS.toLocaleString('en')} items (zotero-sim --synthetic), from the D1 mirror (filled in ${scale.fillRuns} scheduled runs)`, rowsOf(scale.results, floorFigures))}`);
    console.log(`\n${upstreamNote(scale.results)}`);
    console.log('Local D1 is SQLite inside workerd, counted here; on Cloudflare D1 is another service: an upper bound.');
  }
  console.log(
    `\nfloor (trivial Worker, same Miniflare): cold ${ms(floorFigures.cold)} ms, warm median ${ms(floorFigures.warm)} ms, ` +
      `p90 ${ms(floorFigures.warmP90)} ms, main thread ${ms(floorFigures.warmMain)} ms (${floorSamples.length} warm samples)`,
  );
  console.log(
    `an outbound request, as the floor Worker makes one through the same outboundService: ${ms(price.request)} ms, ` +
      `and ${ms(price.per100KB)} ms per 100 KB of answer ("requests": the Worker's requests per call, Zotero's and the files')`,
  );

  if (CPU_JSON) {
    writeFileSync(
      CPU_JSON,
      JSON.stringify({ coldRounds: COLD_ROUNDS, warmup: WARMUP, rounds: ROUNDS, floor: { ...floorFigures, coldSamples: floorCold, warmSamples: floorSamples }, fetchPrice: price, demo, scale, scaleItems: SCALE_ITEMS }, null, 1),
    );
  }
}

run().then(
  () => process.exit(0),
  async (error) => {
    console.error(error);
    await disposeAll();
    process.exit(1);
  },
);

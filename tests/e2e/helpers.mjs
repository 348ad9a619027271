// Shared pieces of the end-to-end tests. Not a test file itself: `node --test` only runs
// `*.test.mjs`, and scripts/e2e.sh passes those explicitly.
//
// The tests talk to the real Worker (the worker-build output under `wrangler dev`), started by
// scripts/e2e.sh, which exports MCP_URL. Run them through that script, not on their own.

import assert from 'node:assert/strict';
import http from 'node:http';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
export const LATEST_LEGACY_VERSION = '2025-11-25';

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

export const SERVER_NAME = 'zotero-mcp';

/** Upper bound for one HTTP exchange or one client call. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Upper bound for one `test()`; a whole client walk-through does a dozen round trips. */
export const TEST_TIMEOUT_MS = 30_000;

/** The MCP endpoint of the Worker under test, e.g. http://127.0.0.1:8787/mcp. */
export function mcpUrl() {
  const url = process.env.MCP_URL;
  if (!url) {
    throw new Error('MCP_URL is not set: run these tests through scripts/e2e.sh (which starts the Worker).');
  }
  return url;
}

/** A URL on the Worker's origin, e.g. workerUrl('/health'). */
export function workerUrl(path) {
  return new URL(path, mcpUrl()).toString();
}

/** fetch() with a timeout, so a hung Worker fails the test instead of the whole run. */
export function fetchWithTimeout(url, init = {}) {
  return fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
}

let nextId = 1;
/** A fresh JSON-RPC id (numbers; the clients under test use strings too, see the modern probe). */
export function newId() {
  return nextId++;
}

/** The per-request `_meta` envelope of the 2026-07-28 era. */
export function modernMeta(overrides = {}) {
  return {
    [META_PROTOCOL_VERSION]: MODERN_VERSION,
    [META_CLIENT_INFO]: { name: 'zotero-mcp-e2e-raw', version: '1.0.0' },
    [META_CLIENT_CAPABILITIES]: {},
    ...overrides,
  };
}

/** The value the Mcp-Name header mirrors for a method, if any (SEP-2243). */
function mcpNameFor(method, params) {
  if (method === 'tools/call' || method === 'prompts/get') return params?.name;
  if (method === 'resources/read') return params?.uri;
  return undefined;
}

/**
 * Build a well-formed 2026-07-28 request: body with the `_meta` envelope, and the
 * MCP-Protocol-Version / Mcp-Method / Mcp-Name headers. `headers` entries override (a value of
 * `null` removes the header) so a test can break exactly one rung of the ladder.
 */
export function modernRequest(method, params = {}, { headers = {}, meta = {}, id = newId() } = {}) {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(meta) } };
  const base = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
  };
  const name = mcpNameFor(method, params);
  if (name !== undefined) base['mcp-name'] = name;
  return { body, headers: mergeHeaders(base, headers) };
}

/** A legacy (2025-era) request: no `_meta` envelope, no Mcp-* headers. */
export function legacyRequest(method, params, { headers = {}, id = newId() } = {}) {
  const body = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return { body, headers: mergeHeaders(base, headers) };
}

function mergeHeaders(base, overrides) {
  const out = { ...base };
  for (const [name, value] of Object.entries(overrides)) {
    for (const existing of Object.keys(out)) {
      if (existing.toLowerCase() === name.toLowerCase()) delete out[existing];
    }
    if (value !== null) out[name] = value;
  }
  return out;
}

/**
 * POST a JSON-RPC message to the MCP endpoint and decode the answer, whether JSON or SSE.
 * Returns { status, headers, contentType, text, json } where `json` is the JSON-RPC message
 * (the first `message` event of an SSE body), or undefined when the body is empty / not JSON.
 */
export async function postMcp({ body, headers }, { rawBody } = {}) {
  const res = await fetchWithTimeout(mcpUrl(), {
    method: 'POST',
    headers,
    body: rawBody ?? JSON.stringify(body),
  });
  return decodeResponse(res);
}

export async function decodeResponse(res) {
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  let json;
  if (contentType.includes('text/event-stream')) {
    json = parseSse(text).find((event) => event.event === 'message' && event.data)?.json;
  } else if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: res.status, headers: res.headers, contentType, text, json };
}

/** Minimal SSE parser (enough for one response per stream). */
export function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    const event = { event: 'message', data: '' };
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event.event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') event.id = value;
    }
    event.data = data.join('\n');
    if (event.data) {
      try {
        event.json = JSON.parse(event.data);
      } catch {
        event.json = undefined;
      }
    }
    events.push(event);
  }
  return events;
}

/**
 * A raw HTTP/1.1 POST with full control over Host (fetch() does not let a caller set Host).
 * Used for the DNS-rebinding guard. Resolves { status, headers, text }.
 */
export function rawPost(url, { headers, body }) {
  const target = new URL(url);
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(payload) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timed out after ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Assert a JSON-RPC error response with the given HTTP status and code, echoing the request id. */
export function assertRpcError(res, { status, code, id }) {
  assert.equal(res.status, status, `HTTP status (body: ${res.text.slice(0, 300)})`);
  assert.ok(res.json, `expected a JSON-RPC body, got: ${res.text.slice(0, 300)}`);
  assert.equal(res.json.jsonrpc, '2.0');
  assert.ok(res.json.error, `expected an error, got: ${res.text.slice(0, 300)}`);
  assert.equal(res.json.error.code, code, `JSON-RPC error code (message: ${res.json.error.message})`);
  assert.equal(typeof res.json.error.message, 'string');
  if (id !== undefined) assert.equal(res.json.id, id, 'error response must echo the request id');
  return res.json.error;
}

/** Concatenated text of a CallToolResult's text blocks. */
export function textOf(result) {
  return (result.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** Run `fn(error)` checks on the rejection of `promise`; fails if it resolves. */
export async function assertRejects(promise, check) {
  let resolved;
  try {
    resolved = await promise;
  } catch (error) {
    check(error);
    return error;
  }
  assert.fail(`expected a rejection, got: ${JSON.stringify(resolved)?.slice(0, 300)}`);
}

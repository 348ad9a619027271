// Shared pieces of the end-to-end tests. Not a test file itself: `node --test` only runs
// `*.test.mjs`, and scripts/e2e.sh passes those explicitly.
//
// The tests talk to the real Worker (the release build, build/worker/shim.mjs, under `wrangler dev`), started by
// scripts/e2e.sh, which exports MCP_URL. Run them through that script, not on their own.

import assert from 'node:assert/strict';
import http from 'node:http';

import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

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
 * `headers` plus a read-only bearer token, unless they already carry an Authorization header
 * (`authorization: null` sends none, to test the challenge).
 */
export async function withAuthorization(headers = {}) {
  const names = Object.keys(headers).map((n) => n.toLowerCase());
  if (names.includes('authorization')) {
    return Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== null));
  }
  return { ...headers, ...(await authHeaders()) };
}

/**
 * POST a JSON-RPC message to the MCP endpoint and decode the answer, whether JSON or SSE.
 * Returns { status, headers, contentType, text, json } where `json` is the JSON-RPC message
 * (the first `message` event of an SSE body), or undefined when the body is empty / not JSON.
 * A successful tools/call answer is checked against its tool's outputSchema (assertToolCallAnswer).
 * `url` defaults to MCP_URL (output-validation.test.mjs points it at its own stand-in).
 */
export async function postMcp({ body, headers }, { rawBody, url = mcpUrl() } = {}) {
  const sent = await withAuthorization(headers);
  const res = await fetchWithTimeout(url, {
    method: 'POST',
    headers: sent,
    body: rawBody ?? JSON.stringify(body),
  });
  const decoded = await decodeResponse(res);
  await assertToolCallAnswer(url, rawBody === undefined ? body : parseJson(rawBody), sent, decoded.json);
  return decoded;
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
export async function rawPost(url, { headers, body }) {
  headers = await withAuthorization(headers);
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
  }).then(async (answer) => {
    // Only JSON bodies: the one tools/call sent this way asks for JSON.
    await assertToolCallAnswer(url, parseJson(payload), headers, parseJson(answer.text));
    return answer;
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

// ---------------------------------------------------------------------------------------------
// Output schemas (issue 34): every successful tool answer must match the outputSchema its tool publishes in
// tools/list. The official clients enforce this (a mismatch is an error in the host, not a result the model
// sees), so an answer that fails here is one a real client refuses. Two mechanisms, both exercised against a
// deliberately wrong stand-in by output-validation.test.mjs:
//   - raw HTTP (postMcp, rawPost, and the tests that fetch by hand): assertToolCallAnswer, with the
//     catalogue fetched once per MCP URL;
//   - the SDK clients: connectValidating lists the tools right after connecting, because both SDKs validate
//     only against schemas they hold from a listTools() (v1 Client.cacheToolMetadata, v2 the response cache
//     read by callTool), and then checks every answer here too, with the listing it got.

// The dialect the SDKs use for schemas without `$schema` (v2's AjvJsonSchemaValidator: Ajv2020), with the
// same formats they register (ajv-formats; zotero_get_item's output has a `uri`).
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
/** Compiled validators by schema text: the same schema from many connections compiles once. */
const validators = new Map();

function validatorFor(schema) {
  const key = JSON.stringify(schema);
  if (!validators.has(key)) validators.set(key, ajv.compile(schema));
  return validators.get(key);
}

/** One Ajv error as `<instancePath> <message>`, with the offending name for additional properties. */
function describeSchemaError(error) {
  const extra = error.params?.additionalProperty === undefined ? '' : ` (${error.params.additionalProperty})`;
  return `${error.instancePath || '/'} ${error.message}${extra}`;
}

/**
 * Why a tools/call result is not one a validating client accepts, or undefined when it is. `tool` is the
 * tool's tools/list entry (undefined: not listed). Error results are not checked, as the clients do not.
 */
export function outputSchemaMismatch(tool, name, args, result) {
  if (!result || result.isError === true) return undefined;
  const context = `; arguments: ${JSON.stringify(args ?? {})}`;
  if (!tool) return `${name} answered but is not in tools/list${context}`;
  if (!tool.outputSchema) return undefined;
  if (result.structuredContent === undefined) {
    return `${name} has an outputSchema but its answer has no structuredContent${context}`;
  }
  const validate = validatorFor(tool.outputSchema);
  if (validate(result.structuredContent)) return undefined;
  const errors = validate.errors.map(describeSchemaError).join('; ');
  return `${name} answer does not match its outputSchema: ${errors}${context}`;
}

/** tools/list of one MCP URL, by tool name: fetched once per URL (a cached promise; a failure is not kept). */
const catalogues = new Map();
function toolCatalogue(url, authorization) {
  if (!catalogues.has(url)) {
    const { body, headers } = legacyRequest('tools/list', {});
    const loading = fetchWithTimeout(url, {
      method: 'POST',
      headers: { ...headers, ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    })
      .then(decodeResponse)
      .then((res) => {
        assert.ok(Array.isArray(res.json?.result?.tools), `tools/list for the outputSchemas: ${res.status} ${res.text.slice(0, 300)}`);
        assert.equal(res.json.result.nextCursor, undefined, 'tools/list in one page');
        return new Map(res.json.result.tools.map((tool) => [tool.name, tool]));
      });
    catalogues.set(url, loading);
    loading.catch(() => catalogues.delete(url));
  }
  return catalogues.get(url);
}

function headerValue(headers, name) {
  const found = Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return found?.[1];
}

/**
 * Fails the test when `response` (a decoded JSON-RPC message) is a successful answer to the tools/call
 * `request` (its body) that does not match the tool's outputSchema. Anything else passes: other methods,
 * JSON-RPC errors, tool errors. The catalogue is asked for with the call's own Authorization (a token the
 * server just accepted at this URL; none for the unauthenticated stand-in), in the legacy era, whose
 * tools/list carries the same schemas.
 */
export async function assertToolCallAnswer(url, request, requestHeaders, response) {
  if (request?.method !== 'tools/call' || !response?.result) return;
  const { name, arguments: args } = request.params ?? {};
  const tools = await toolCatalogue(url, headerValue(requestHeaders, 'authorization'));
  const mismatch = outputSchemaMismatch(tools.get(name), name, args, response.result);
  if (mismatch) assert.fail(mismatch);
}

/**
 * `client.connect(transport)`, then `listTools()`, so the SDK client holds the tools' outputSchemas and
 * validates every callTool answer against them (neither SDK lists on its own: without a listing, callTool
 * accepts any structuredContent). The client's callTool is wrapped so that a mismatch, whether the SDK's
 * own rejection or this module's check of what the SDK let through, fails naming the tool and the
 * arguments. Works with both SDKs' callTool signatures (v1: params, resultSchema, options; v2: params,
 * options). Returns the client.
 */
export async function connectValidating(client, transport, { timeout = REQUEST_TIMEOUT_MS } = {}) {
  await client.connect(transport, { timeout });
  const { tools } = await client.listTools(undefined, { timeout });
  const listed = new Map(tools.map((tool) => [tool.name, tool]));
  const callTool = client.callTool.bind(client);
  client.callTool = async (params, ...rest) => {
    let result;
    try {
      result = await callTool(params, ...rest);
    } catch (error) {
      // The SDKs' messages: "… does not match the tool's output schema: <ajv errors>", "… has an output
      // schema but did not return structured content", "… has an invalid outputSchema …".
      if (/output ?schema|structured content/i.test(error?.message ?? '')) {
        error.message = `${params.name}: ${error.message}; arguments: ${JSON.stringify(params.arguments ?? {})}`;
      }
      throw error;
    }
    const mismatch = outputSchemaMismatch(listed.get(params.name), params.name, params.arguments, result);
    if (mismatch) assert.fail(`${mismatch} (the client accepted it)`);
    return result;
  };
  return client;
}

// ---------------------------------------------------------------------------------------------
// OAuth: every request to /mcp needs a bearer token. The tests get theirs the way a real client
// does: register (DCR), open /authorize, post the consent form with the server password (as a
// browser would), and exchange the code with PKCE. Tokens are cached per scope set for the run.

/** The server password of tests/e2e/wrangler.test.toml. */
export const TEST_PASSWORD = 'test-password';
export const OAUTH_REDIRECT_URI = 'http://127.0.0.1/e2e-callback';
export const READ_SCOPES = ['zotero:read'];
export const WRITE_SCOPES = ['zotero:read', 'zotero:write'];

function base64url(bytes) {
  return Buffer.from(bytes).toString('base64url');
}

/** A PKCE pair (RFC 7636, S256). */
export async function pkcePair() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** POST a form to the Worker (application/x-www-form-urlencoded); redirects are not followed. */
export function postForm(url, form, headers = {}) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) {
    for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  }
  return fetchWithTimeout(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
    redirect: 'manual',
  });
}

/** Registers a public client (DCR) and returns its registration response. */
export async function registerClient(metadata = {}) {
  const res = await fetchWithTimeout(workerUrl('/oauth/register'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'zotero-mcp e2e',
      redirect_uris: [OAUTH_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  assert.equal(res.status, 201, `registration: ${await res.clone().text()}`);
  return res.json();
}

/** The /authorize URL for a client, with PKCE and the MCP URL as resource. */
export function authorizeUrl(clientId, challenge, extra = {}) {
  const url = new URL(workerUrl('/authorize'));
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: OAUTH_REDIRECT_URI,
    state: 'e2e-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: mcpUrl(),
    ...extra,
  };
  // `null` drops a parameter.
  url.search = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null)).toString();
  return url;
}

/**
 * Approves an authorization URL by posting the consent form with the password and these scope
 * ticks; returns the 303's Location as a URL (with `code`, `state`, `iss`).
 */
export async function approve(authorizationUrl, scopes, password = TEST_PASSWORD) {
  const res = await postForm(authorizationUrl, { password, scope: scopes });
  assert.equal(res.status, 303, `consent form: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return new URL(res.headers.get('location'));
}

/** The token endpoint. */
export async function tokenRequest(form) {
  const res = await postForm(workerUrl('/oauth/token'), form);
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/**
 * The whole flow: register, authorize with these ticks, exchange. Returns the token response.
 * `bound: false` leaves out `resource`, which yields a token valid for any URL of this server.
 */
export async function oauthFlow(scopes = READ_SCOPES, { bound = true } = {}) {
  const client = await registerClient();
  const { verifier, challenge } = await pkcePair();
  const location = await approve(authorizeUrl(client.client_id, challenge, bound ? {} : { resource: null }), scopes);
  const code = location.searchParams.get('code');
  assert.ok(code, `no code in ${location}`);
  const tokens = await tokenRequest({
    grant_type: 'authorization_code',
    code,
    client_id: client.client_id,
    code_verifier: verifier,
    redirect_uri: OAUTH_REDIRECT_URI,
    ...(bound ? { resource: mcpUrl() } : {}),
  });
  assert.equal(tokens.status, 200, `code exchange: ${tokens.text}`);
  return { clientId: client.client_id, ...tokens.json };
}

const tokenCache = new Map();
/**
 * A cached access token with these scopes, obtained through the real flow once per run. It is not
 * bound to a resource, so the raw HTTP tests that send another `Host` (the DNS-rebinding checks)
 * still reach the ladder; audience binding has its own tests in oauth-flow.test.mjs.
 */
export function accessToken(scopes = READ_SCOPES) {
  const key = [...scopes].sort().join(' ');
  if (!tokenCache.has(key)) tokenCache.set(key, oauthFlow(scopes, { bound: false }).then((t) => t.access_token));
  return tokenCache.get(key);
}

/** `{ authorization: 'Bearer …' }` for these scopes. */
export async function authHeaders(scopes = READ_SCOPES) {
  return { authorization: `Bearer ${await accessToken(scopes)}` };
}

// Raw HTTP against the real Worker: the request "ladder" of the MCP endpoint (origin, method,
// content type, JSON, era classification, headers, version, method lookup) and the plain pages.
// No MCP client library here, so every status code and header is seen as sent.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  LATEST_LEGACY_VERSION,
  LEGACY_VERSIONS,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  MODERN_VERSION,
  SERVER_NAME,
  TEST_TIMEOUT_MS,
  assertRpcError,
  decodeResponse,
  fetchWithTimeout,
  legacyRequest,
  mcpUrl,
  modernRequest,
  newId,
  parseSse,
  postMcp,
  rawPost,
  workerUrl,
  withAuthorization,
} from './helpers.mjs';

const t = { timeout: TEST_TIMEOUT_MS };

function assertCompleteModernResult(res, id) {
  assert.equal(res.status, 200, `HTTP status (body: ${res.text.slice(0, 300)})`);
  assert.ok(res.json?.result, `expected a result, got: ${res.text.slice(0, 300)}`);
  assert.equal(res.json.id, id);
  const result = res.json.result;
  assert.equal(result.resultType, 'complete');
  assert.equal(result._meta?.[META_SERVER_INFO]?.name, SERVER_NAME);
  assert.equal(typeof result._meta?.[META_SERVER_INFO]?.version, 'string');
  return result;
}

function assertCacheHints(result, method) {
  assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `${method}: ttlMs is an integer >= 0`);
  assert.ok(['public', 'private'].includes(result.cacheScope), `${method}: cacheScope is public|private`);
}

describe('HTTP: transport rungs before JSON-RPC', () => {
  test('GET /mcp is 405 with Allow: POST', t, async () => {
    const res = await fetchWithTimeout(mcpUrl(), { method: 'GET', headers: { accept: 'text/event-stream' } });
    await res.arrayBuffer();
    assert.equal(res.status, 405);
    assert.match(res.headers.get('allow') ?? '', /\bPOST\b/);
  });

  test('DELETE /mcp is 405 with Allow: POST', t, async () => {
    const res = await fetchWithTimeout(mcpUrl(), { method: 'DELETE', headers: { 'mcp-session-id': 'abc' } });
    await res.arrayBuffer();
    assert.equal(res.status, 405);
    assert.match(res.headers.get('allow') ?? '', /\bPOST\b/);
  });

  test('a non-JSON content type is 415', t, async () => {
    const req = legacyRequest('ping');
    const res = await postMcp({ ...req, headers: { ...req.headers, 'content-type': 'text/plain' } });
    assert.equal(res.status, 415);
  });

  test('application/json with a charset parameter is accepted', t, async () => {
    const req = legacyRequest('ping');
    const res = await postMcp({ ...req, headers: { ...req.headers, 'content-type': 'application/json; charset=utf-8' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json?.result, {});
  });

  test('invalid JSON is 400 with -32700', t, async () => {
    const req = legacyRequest('ping');
    const res = await postMcp(req, { rawBody: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    assertRpcError(res, { status: 400, code: -32700 });
    assert.equal(res.json.id, null, 'a parse error has id null');
  });

  test('a batch array is 400', t, async () => {
    const a = legacyRequest('ping');
    const b = legacyRequest('ping');
    const res = await postMcp({ headers: a.headers, body: [a.body, b.body] });
    assert.equal(res.status, 400, res.text);
    assert.ok(res.json?.error, `expected a JSON-RPC error body, got: ${res.text.slice(0, 300)}`);
  });

  test('a notification is 202 with an empty body', t, async () => {
    const req = legacyRequest('notifications/initialized');
    delete req.body.id;
    const res = await postMcp(req);
    assert.equal(res.status, 202);
    assert.equal(res.text, '');
  });
});

describe('HTTP: Origin and Host guards', () => {
  test('Origin https://evil.example is 403', t, async () => {
    const req = modernRequest('server/discover');
    const res = await postMcp({ ...req, headers: { ...req.headers, origin: 'https://evil.example' } });
    assert.equal(res.status, 403);
  });

  for (const origin of ['https://claude.ai', 'https://claude.com', 'https://chatgpt.com']) {
    test(`Origin ${origin} is allowed`, t, async () => {
      const req = modernRequest('server/discover');
      const res = await postMcp({ ...req, headers: { ...req.headers, origin } });
      assertCompleteModernResult(res, req.body.id);
    });
  }

  test('Origin http://localhost:<port> is allowed', t, async () => {
    const req = modernRequest('server/discover');
    const res = await postMcp({ ...req, headers: { ...req.headers, origin: 'http://localhost:6274' } });
    assertCompleteModernResult(res, req.body.id);
  });

  test('a request without Origin is allowed (server-to-server clients)', t, async () => {
    const req = modernRequest('server/discover');
    const res = await postMcp(req);
    assertCompleteModernResult(res, req.body.id);
  });

  test('a Host outside ALLOWED_HOSTS is 403 (DNS rebinding guard)', t, async () => {
    const req = modernRequest('server/discover');
    const res = await rawPost(mcpUrl(), {
      headers: { ...req.headers, host: 'evil.example.com', origin: 'http://evil.example.com' },
      body: req.body,
    });
    assert.equal(res.status, 403, res.text);
  });

  test('Host localhost:<port> is accepted', t, async () => {
    const req = modernRequest('server/discover');
    const port = new URL(mcpUrl()).port;
    const res = await rawPost(mcpUrl(), { headers: { ...req.headers, host: `localhost:${port}` }, body: req.body });
    assert.equal(res.status, 200, res.text);
  });
});

describe('HTTP: 2026-07-28 ladder', () => {
  test('server/discover: versions, capabilities, serverInfo, cache hints', t, async () => {
    const req = modernRequest('server/discover');
    const res = await postMcp(req);
    assert.match(res.contentType, /application\/json/);
    const result = assertCompleteModernResult(res, req.body.id);
    assert.ok(result.supportedVersions.includes(MODERN_VERSION));
    assert.ok(result.capabilities.tools && result.capabilities.resources && result.capabilities.prompts);
    assertCacheHints(result, 'server/discover');
    assert.equal(res.headers.get('mcp-session-id'), null, 'no session id is minted');
  });

  test('a string request id is echoed', t, async () => {
    // The 2.x client's connect-time probe uses ids like "server-discover-probe-1".
    const req = modernRequest('server/discover', {}, { id: 'server-discover-probe-1' });
    const res = await postMcp(req);
    assertCompleteModernResult(res, 'server-discover-probe-1');
  });

  for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
    test(`${method}: resultType, serverInfo and cache hints`, t, async () => {
      const req = modernRequest(method);
      const res = await postMcp(req);
      assertCacheHints(assertCompleteModernResult(res, req.body.id), method);
    });
  }

  test('resources/read: cache hints', t, async () => {
    const req = modernRequest('resources/read', { uri: 'fixture://hello' });
    const res = await postMcp(req);
    const result = assertCompleteModernResult(res, req.body.id);
    assertCacheHints(result, 'resources/read');
    assert.equal(result.contents[0].text, 'Hello from zotero-mcp fixtures');
  });

  test('tools/call: resultType complete and structured content', t, async () => {
    const req = modernRequest('tools/call', { name: 'fixture_echo', arguments: { text: 'ping' } });
    const res = await postMcp(req);
    const result = assertCompleteModernResult(res, req.body.id);
    assert.deepEqual(result.structuredContent, { echoed: 'ping', length: 4 });
  });

  test('missing MCP-Protocol-Version header is 400 -32020', t, async () => {
    const req = modernRequest('tools/list', {}, { headers: { 'mcp-protocol-version': null } });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('MCP-Protocol-Version header that differs from _meta is 400 -32020', t, async () => {
    const req = modernRequest('tools/list', {}, { headers: { 'mcp-protocol-version': LATEST_LEGACY_VERSION } });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('header/_meta mismatch wins over an unsupported _meta version (-32020, not -32022)', t, async () => {
    // The conformance suite (server-stateless, sep-2575-http-server-header-mismatch-400) sends
    // MCP-Protocol-Version: 2026-07-28 with _meta protocolVersion v999.0.0 and expects -32020:
    // compare header and _meta before checking whether the version is supported.
    const req = modernRequest('server/discover', {}, { meta: { [META_PROTOCOL_VERSION]: 'v999.0.0' } });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('missing Mcp-Method header is 400 -32020', t, async () => {
    const req = modernRequest('tools/list', {}, { headers: { 'mcp-method': null } });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('Mcp-Method that differs from the body is 400 -32020', t, async () => {
    const req = modernRequest('tools/list', {}, { headers: { 'mcp-method': 'prompts/list' } });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('header names are case-insensitive, values are trimmed', t, async () => {
    // node:http, not fetch(): fetch would already strip the surrounding whitespace.
    const req = modernRequest('tools/call', { name: 'fixture_echo', arguments: { text: 'x' } }, {
      headers: { 'MCP-METHOD': ' tools/call ', 'Mcp-Name': '  fixture_echo  ' },
    });
    const res = await rawPost(mcpUrl(), req);
    assert.equal(res.status, 200, res.text);
    const body = JSON.parse(res.text);
    assert.equal(body.id, req.body.id);
    assert.equal(body.result?.resultType, 'complete', res.text);
  });

  test('missing Mcp-Name on tools/call is 400 -32020', t, async () => {
    const req = modernRequest('tools/call', { name: 'fixture_echo', arguments: { text: 'x' } }, {
      headers: { 'mcp-name': null },
    });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('Mcp-Name that differs from resources/read uri is 400 -32020', t, async () => {
    const req = modernRequest('resources/read', { uri: 'fixture://hello' }, {
      headers: { 'mcp-name': 'fixture://echo/other' },
    });
    assertRpcError(await postMcp(req), { status: 400, code: -32020, id: req.body.id });
  });

  test('a base64-sentinel Mcp-Name is decoded before comparing', t, async () => {
    const uri = 'fixture://echo/café';
    const encoded = `=?base64?${Buffer.from(uri, 'utf8').toString('base64')}?=`;
    const req = modernRequest('resources/read', { uri }, { headers: { 'mcp-name': encoded } });
    const result = assertCompleteModernResult(await postMcp(req), req.body.id);
    assert.equal(result.contents[0].text, 'café');
  });

  test('missing _meta clientCapabilities is 400 -32602', t, async () => {
    const req = modernRequest('server/discover');
    delete req.body.params._meta[META_CLIENT_CAPABILITIES];
    assertRpcError(await postMcp(req), { status: 400, code: -32602, id: req.body.id });
  });

  test('_meta without protocolVersion is 400 -32602 (not a header mismatch)', t, async () => {
    const req = modernRequest('server/discover');
    delete req.body.params._meta[META_PROTOCOL_VERSION];
    assertRpcError(await postMcp(req), { status: 400, code: -32602, id: req.body.id });
  });

  test('a modern header with no _meta envelope is 400 -32602', t, async () => {
    const req = modernRequest('server/discover');
    delete req.body.params._meta;
    assertRpcError(await postMcp(req), { status: 400, code: -32602, id: req.body.id });
  });

  test('an unsupported version is 400 -32022 with data.supported and data.requested', t, async () => {
    const requested = '2099-01-01';
    const req = modernRequest('server/discover', {}, {
      meta: { [META_PROTOCOL_VERSION]: requested },
      headers: { 'mcp-protocol-version': requested },
    });
    const error = assertRpcError(await postMcp(req), { status: 400, code: -32022, id: req.body.id });
    assert.ok(Array.isArray(error.data?.supported), 'data.supported is a list');
    assert.ok(error.data.supported.includes(MODERN_VERSION), 'data.supported lists 2026-07-28');
    assert.equal(error.data.requested, requested);
  });

  test('an unknown method is 404 -32601', t, async () => {
    const req = modernRequest('no/such/method');
    assertRpcError(await postMcp(req), { status: 404, code: -32601, id: req.body.id });
  });

  for (const removed of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']) {
    test(`${removed} carrying a 2026-07-28 _meta is 404 -32601 (removed in 2026-07-28)`, t, async () => {
      const req = modernRequest(removed);
      assertRpcError(await postMcp(req), { status: 404, code: -32601, id: req.body.id });
    });
  }

  test('an unknown tool is -32602 in-band (HTTP 200)', t, async () => {
    const req = modernRequest('tools/call', { name: 'no_such_fixture_tool', arguments: {} });
    assertRpcError(await postMcp(req), { status: 200, code: -32602, id: req.body.id });
  });
});

describe('HTTP: 2025 (legacy) era', () => {
  test('initialize with Accept: */* and no MCP-Protocol-Version is 200 JSON, 2025-11-25 echoed', t, async () => {
    const req = legacyRequest('initialize', {
      protocolVersion: LATEST_LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: 'zotero-mcp-e2e-raw', version: '1.0.0' },
    }, { headers: { accept: '*/*' } });
    const res = await postMcp(req);
    assert.equal(res.status, 200, res.text);
    assert.match(res.contentType, /application\/json/);
    assert.equal(res.json.id, req.body.id);
    const result = res.json.result;
    assert.equal(result.protocolVersion, LATEST_LEGACY_VERSION);
    assert.equal(result.serverInfo?.name, SERVER_NAME);
    assert.ok(result.capabilities?.tools);
    assert.equal(res.headers.get('mcp-session-id'), null, 'stateless: no session id');
  });

  for (const version of LEGACY_VERSIONS.slice(1)) {
    test(`initialize echoes ${version}`, t, async () => {
      const req = legacyRequest('initialize', {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: 'zotero-mcp-e2e-raw', version: '1.0.0' },
      });
      const res = await postMcp(req);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.result.protocolVersion, version);
    });
  }

  test('initialize with an unknown version answers a legacy version it supports', t, async () => {
    const req = legacyRequest('initialize', {
      protocolVersion: '2023-01-01',
      capabilities: {},
      clientInfo: { name: 'zotero-mcp-e2e-raw', version: '1.0.0' },
    });
    const res = await postMcp(req);
    assert.equal(res.status, 200, res.text);
    assert.ok(LEGACY_VERSIONS.includes(res.json.result.protocolVersion), res.json.result.protocolVersion);
    assert.notEqual(res.json.result.protocolVersion, MODERN_VERSION, 'initialize never offers 2026-07-28');
  });

  test('ping is {}', t, async () => {
    const req = legacyRequest('ping', undefined, { headers: { 'mcp-protocol-version': LATEST_LEGACY_VERSION } });
    const res = await postMcp(req);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result, {});
  });

  test('Accept: text/event-stream only gets an SSE body', t, async () => {
    const req = legacyRequest('tools/list', {}, {
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': LATEST_LEGACY_VERSION },
    });
    const res = await fetchWithTimeout(mcpUrl(), { method: 'POST', headers: await withAuthorization(req.headers), body: JSON.stringify(req.body) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = parseSse(await res.text());
    const message = events.find((e) => e.json?.id === req.body.id);
    assert.ok(message, `SSE stream carries the response (events: ${JSON.stringify(events).slice(0, 300)})`);
    assert.ok(message.json.result.tools.some((tool) => tool.name === 'fixture_echo'));
  });

  test('tools/call works without any MCP-Protocol-Version header', t, async () => {
    const req = legacyRequest('tools/call', { name: 'fixture_echo', arguments: { text: 'legacy' } });
    const res = await postMcp(req);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result.structuredContent, { echoed: 'legacy', length: 6 });
  });

  test('a legacy request ignores Mcp-Session-Id', t, async () => {
    const req = legacyRequest('ping', undefined, { headers: { 'mcp-session-id': 'stale-session' } });
    const res = await postMcp(req);
    assert.equal(res.status, 200, res.text);
  });
});

describe('HTTP: pages outside /mcp', () => {
  test('GET / is HTML', t, async () => {
    const res = await fetchWithTimeout(workerUrl('/'));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await res.text(), /<html|<!doctype html/i);
  });

  test('GET /health is JSON with Cache-Control: no-store', t, async () => {
    const res = await fetchWithTimeout(workerUrl('/health'));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(res.headers.get('cache-control') ?? '', /no-store/);
    const body = await decodeResponse(res);
    assert.equal(typeof body.json, 'object');
  });

  test('an unknown path is 404', t, async () => {
    const res = await fetchWithTimeout(workerUrl(`/no-such-page-${newId()}`));
    await res.arrayBuffer();
    assert.equal(res.status, 404);
  });
});

describe('HTTP: bodies over the route limit are refused before they are read', () => {
  test('a declared length over the registration limit (16 KiB) is 413', t, async () => {
    const body = JSON.stringify({ client_name: 'x'.repeat(20_000), redirect_uris: ['http://127.0.0.1/cb'] });
    const res = await fetchWithTimeout(workerUrl('/oauth/register'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(res.status, 413);
    await res.arrayBuffer();
  });

  test('a body within the limit still reaches the route', t, async () => {
    const res = await fetchWithTimeout(workerUrl('/oauth/register'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'small', redirect_uris: ['http://127.0.0.1/cb'] }),
    });
    assert.equal(res.status, 201, await res.text());
  });

  test('a streamed body without a length is cut off at the limit', t, async () => {
    // 6 MiB to /mcp (limit 4 MiB) in 1 KiB chunks, sent chunked (no Content-Length). A server that held it all
    // would answer 401 (no token) after reading everything; one that keeps its limit answers 413, or closes the
    // connection while the client is still sending, which undici reports as EPIPE/ECONNRESET.
    const chunk = new TextEncoder().encode('a'.repeat(1024));
    const total = 6 * 1024;
    let sent = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (sent === total) return controller.close();
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    let status;
    try {
      const res = await fetchWithTimeout(mcpUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      });
      status = res.status;
      await res.arrayBuffer();
    } catch (error) {
      assert.ok(['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(error.cause?.code), `unexpected failure: ${error.cause ?? error}`);
      assert.ok(sent < total, `the server read all ${sent} KiB before closing`);
      status = 'closed';
    }
    assert.ok(status === 413 || status === 'closed', `expected 413 or an early close, got ${status}`);
    // The server still answers afterwards (a Worker that left the rest of the body unread broke the next
    // request under wrangler dev; it now drains what it does not keep).
    const after = await fetchWithTimeout(workerUrl('/health'));
    await after.arrayBuffer();
    assert.equal(after.status, 200);
  });
});

// ChatGPT's requests replayed against the server, in the order it sends them when a user adds the connector and
// then runs deep research (../shared/reference/protocols.md §2.1 and OpenAI's connector docs): the unauthenticated
// probe and its 401, the protected-resource and authorization-server metadata, registration with ChatGPT's
// redirect URI, the consent page, the code exchange with the path-bearing `resource` it echoes, a 2025
// `initialize` (as ChatGPT's connectors still open), the tool list, then deep research's `search` and `fetch`.
// The Secure MCP Tunnel's `server/discover` (2026-07-28) is answered with the same token.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  LATEST_LEGACY_VERSION,
  READ_SCOPES,
  TEST_TIMEOUT_MS,
  approve,
  assertToolCallAnswer,
  authorizeUrl,
  fetchWithTimeout,
  legacyRequest,
  mcpUrl,
  modernRequest,
  pkcePair,
  registerClient,
  tokenRequest,
} from './helpers.mjs';

const CHATGPT_REDIRECT = 'https://chatgpt.com/connector_platform_oauth_redirect';
const CLIENT_INFO = { name: 'openai-mcp', version: '1.0.0' };

/** A JSON-RPC request with ChatGPT's token; the answer's body, checked against the tool's schema when a call. */
async function send(token, { body, headers }) {
  const sent = { ...headers, authorization: `Bearer ${token}` };
  const res = await fetchWithTimeout(mcpUrl(), { method: 'POST', headers: sent, body: JSON.stringify(body) });
  const text = await res.text();
  assert.equal(res.status, 200, `${body.method}: ${res.status} ${text.slice(0, 300)}`);
  const json = text.startsWith('event:') || text.startsWith('data:')
    ? JSON.parse(text.split('\n').find((line) => line.startsWith('data:')).slice(5))
    : JSON.parse(text);
  if (body.method === 'tools/call') await assertToolCallAnswer(mcpUrl(), body, sent, json);
  return json;
}

/** OpenAI's shape: one text content holding the JSON, which is also the structured content. */
function openaiAnswer(result) {
  assert.equal(result.isError, undefined, JSON.stringify(result).slice(0, 400));
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, 'text');
  const parsed = JSON.parse(result.content[0].text);
  assert.deepEqual(parsed, result.structuredContent);
  return parsed;
}

describe('ChatGPT adding the connector, then deep research', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let token;

  test('discovers the authorization server from the 401 and the metadata', async () => {
    const probe = legacyRequest('initialize', {
      protocolVersion: LATEST_LEGACY_VERSION,
      capabilities: {},
      clientInfo: CLIENT_INFO,
    });
    const res = await fetchWithTimeout(mcpUrl(), {
      method: 'POST',
      headers: probe.headers,
      body: JSON.stringify(probe.body),
    });
    assert.equal(res.status, 401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    const metadataUrl = challenge.match(/resource_metadata="([^"]+)"/)?.[1];
    assert.ok(metadataUrl, challenge);
    const prm = await (await fetchWithTimeout(metadataUrl)).json();
    assert.equal(prm.resource, mcpUrl(), 'the resource ChatGPT will echo is this /mcp URL, path and all');
    const as = await (await fetchWithTimeout(`${prm.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json();
    assert.ok(as.code_challenge_methods_supported.includes('S256'));
    assert.ok(as.token_endpoint_auth_methods_supported.includes('none'));
    assert.ok(as.registration_endpoint, 'ChatGPT registers where no metadata document is accepted');
  });

  test('registers, is authorized on the consent page and exchanges the code for a bound token', async () => {
    // ChatGPT's registration: a public client with its redirect URI (the rest as every client sends it).
    const client = await registerClient({ client_name: 'ChatGPT', redirect_uris: [CHATGPT_REDIRECT] });
    const { verifier, challenge } = await pkcePair();
    const location = await approve(
      authorizeUrl(client.client_id, challenge, { redirect_uri: CHATGPT_REDIRECT, state: 'chatgpt-state' }),
      READ_SCOPES,
    );
    assert.equal(`${location.origin}${location.pathname}`, CHATGPT_REDIRECT);
    assert.equal(location.searchParams.get('state'), 'chatgpt-state');
    const tokens = await tokenRequest({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code'),
      client_id: client.client_id,
      code_verifier: verifier,
      redirect_uri: CHATGPT_REDIRECT,
      resource: mcpUrl(),
    });
    assert.equal(tokens.status, 200, tokens.text);
    assert.equal(tokens.json.token_type.toLowerCase(), 'bearer');
    token = tokens.json.access_token;
  });

  test('opens with a 2025 initialize and lists search and fetch as read-only tools', async () => {
    const init = await send(
      token,
      legacyRequest('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: CLIENT_INFO }),
    );
    assert.equal(init.result.protocolVersion, '2025-06-18');
    const tools = (await send(token, legacyRequest('tools/list', {}))).result.tools;
    for (const name of ['search', 'fetch']) {
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool, `${name} is listed`);
      assert.equal(tool.annotations.readOnlyHint, true);
      assert.equal(tool.annotations.openWorldHint, false);
      assert.ok(tool.outputSchema, `${name} publishes an output schema`);
    }
    assert.deepEqual(tools.find((t) => t.name === 'search').inputSchema.required, ['query']);
    assert.deepEqual(tools.find((t) => t.name === 'fetch').inputSchema.required, ['id']);
    for (const tool of tools) {
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        assert.equal(typeof tool.annotations[hint], 'boolean', `${tool.name}.${hint}`);
      }
    }
  });

  test('the Secure MCP Tunnel\'s server/discover answers with the same token', async () => {
    const discovered = await send(token, modernRequest('server/discover', {}));
    assert.ok(discovered.result.supportedVersions.includes('2026-07-28'), JSON.stringify(discovered));
  });

  test('deep research searches, then fetches every result with a web url it can cite', async () => {
    const call = (name, args) => send(token, legacyRequest('tools/call', { name, arguments: args }));
    const found = openaiAnswer((await call('search', { query: 'protein structure prediction' })).result);
    assert.ok(found.results.length > 0, JSON.stringify(found));
    for (const result of found.results.slice(0, 5)) {
      assert.deepEqual(Object.keys(result), ['id', 'title', 'url']);
      assert.match(result.url, /^https:\/\/\S+$/);
      const fetched = openaiAnswer((await call('fetch', { id: result.id })).result);
      assert.equal(fetched.id, result.id);
      assert.equal(fetched.title, result.title);
      assert.equal(fetched.url, result.url);
      assert.ok(fetched.text.startsWith('#'), 'the metadata comes first');
      assert.equal(typeof fetched.metadata.itemType, 'string');
    }
  });
});

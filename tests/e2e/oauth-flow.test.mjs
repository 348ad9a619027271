// The OAuth server of the real Worker, over raw HTTP: discovery, registration, the consent page,
// the code exchange with PKCE, a call to /mcp, refresh rotation and revocation.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  OAUTH_REDIRECT_URI,
  TEST_TIMEOUT_MS,
  WRITE_SCOPES,
  approve,
  assertToolCallAnswer,
  authorizeUrl,
  fetchWithTimeout,
  legacyRequest,
  mcpUrl,
  oauthFlow,
  pkcePair,
  postForm,
  registerClient,
  tokenRequest,
  workerUrl,
} from './helpers.mjs';

const opts = { timeout: TEST_TIMEOUT_MS };

/** tools/call with a bearer token, optionally at another URL of the same Worker; a result must match its outputSchema. */
async function callTool(token, name, args, url = mcpUrl()) {
  const { body, headers } = legacyRequest('tools/call', { name, arguments: args });
  const sent = { ...headers, authorization: `Bearer ${token}` };
  const res = await fetchWithTimeout(url, { method: 'POST', headers: sent, body: JSON.stringify(body) });
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  await assertToolCallAnswer(url, body, sent, json);
  return { status: res.status, headers: res.headers, json };
}

describe('OAuth against the Worker', () => {
  test('discovery documents derive from the request origin', opts, async () => {
    const origin = new URL(mcpUrl()).origin;
    const as = await (await fetchWithTimeout(workerUrl('/.well-known/oauth-authorization-server'))).json();
    assert.equal(as.issuer, origin);
    assert.equal(as.token_endpoint, `${origin}/oauth/token`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.ok(as.token_endpoint_auth_methods_supported.includes('none'));
    // The Worker's fetch is public-only (the test config sets global_fetch_strictly_public), so it accepts
    // metadata documents; the native server cannot promise that of its HTTP client, so it offers DCR only.
    const native = process.env.E2E_TARGET === 'native';
    assert.equal(as.client_id_metadata_document_supported, !native);
    const prm = await (await fetchWithTimeout(workerUrl('/.well-known/oauth-protected-resource/mcp'))).json();
    assert.equal(prm.resource, mcpUrl());
    assert.deepEqual(prm.authorization_servers, [origin]);
  });

  test('/mcp without a token is a 401 challenge naming the resource metadata', opts, async () => {
    const { body, headers } = legacyRequest('ping');
    const res = await fetchWithTimeout(mcpUrl(), { method: 'POST', headers, body: JSON.stringify(body) });
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer realm="OAuth", resource_metadata="${new URL(mcpUrl()).origin}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  test('the consent page names the client and the redirect host, with locked-down headers', opts, async () => {
    const client = await registerClient({ client_name: 'E2E <Client>' });
    const { challenge } = await pkcePair();
    const res = await fetchWithTimeout(authorizeUrl(client.client_id, challenge));
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /E2E &lt;Client&gt;/);
    assert.match(html, /<span class="host">127\.0\.0\.1<\/span>/);
    assert.match(html, /program on the computer you are using/, 'loopback redirect warning');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    assert.doesNotMatch(res.headers.get('content-security-policy'), /form-action/);
  });

  test('a wrong password is refused; an unregistered redirect is never followed', opts, async () => {
    const client = await registerClient();
    const { challenge } = await pkcePair();
    const wrong = await postForm(authorizeUrl(client.client_id, challenge), { password: 'not-the-password' });
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /Incorrect password/);
    const evil = await fetchWithTimeout(authorizeUrl(client.client_id, challenge, { redirect_uri: 'https://evil.example/cb' }), { redirect: 'manual' });
    assert.equal(evil.status, 400);
    assert.equal(evil.headers.get('location'), null);
  });

  test('code, token, MCP call, refresh rotation and revocation', opts, async () => {
    const tokens = await oauthFlow(WRITE_SCOPES);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'zotero:read zotero:write');
    assert.equal(tokens.resource, mcpUrl());

    const wrote = await callTool(tokens.access_token, 'fixture_write', { note: 'e2e' });
    assert.equal(wrote.status, 200);
    assert.deepEqual(wrote.json.result.structuredContent, { written: true });

    // The audience is checked per request: the same Worker under another host name is another resource.
    const port = new URL(mcpUrl()).port;
    const elsewhere = await callTool(tokens.access_token, 'fixture_echo', { text: 'x' }, `http://localhost:${port}/mcp`);
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.headers.get('www-authenticate'), /Invalid audience/);

    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal(refreshed.headers.get('cache-control'), 'no-store');
    assert.notEqual(refreshed.json.refresh_token, tokens.refresh_token, 'rotated');
    assert.equal((await callTool(refreshed.json.access_token, 'fixture_echo', { text: 'x' })).status, 200);

    const revoked = await tokenRequest({ token: refreshed.json.refresh_token, token_type_hint: 'refresh_token', client_id: tokens.clientId });
    assert.equal(revoked.status, 200);
    assert.equal((await callTool(refreshed.json.access_token, 'fixture_echo', { text: 'x' })).status, 401, 'revocation cascades to access tokens');
    assert.equal((await callTool(tokens.access_token, 'fixture_echo', { text: 'x' })).status, 401);
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token, client_id: tokens.clientId });
    assert.equal(again.json.error, 'invalid_grant');
  });

  test('a replayed code is refused and revokes what the first exchange issued', opts, async () => {
    const client = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const code = (await approve(authorizeUrl(client.client_id, challenge), ['zotero:read'])).searchParams.get('code');
    const form = { grant_type: 'authorization_code', code, client_id: client.client_id, code_verifier: verifier, redirect_uri: OAUTH_REDIRECT_URI };
    const first = await tokenRequest(form);
    assert.equal(first.status, 200);
    const replay = await tokenRequest(form);
    assert.equal(replay.json.error, 'invalid_grant');
    assert.equal((await callTool(first.json.access_token, 'fixture_echo', { text: 'x' })).status, 401);
  });
});

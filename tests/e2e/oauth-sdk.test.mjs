// The OAuth support of @modelcontextprotocol/client 2.4.0 against the Worker: the client discovers
// the authorization server from the 401 challenge, registers itself, sends the "user" to the
// consent page (here: the test posts the form as a browser would), finishes with the code (checking
// `iss`, RFC 9207), connects with the token, and refreshes on its own when the token stops working.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

import { MODERN_VERSION, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, approve, connectValidating, mcpUrl, textOf, tokenRequest } from './helpers.mjs';

/** An in-memory OAuthClientProvider whose "browser" is the test itself. */
class TestProvider {
  constructor() {
    this.saved = {};
    this.authorizationUrl = undefined;
  }
  get redirectUrl() {
    return 'http://127.0.0.1/sdk-callback';
  }
  get clientMetadata() {
    return {
      client_name: 'zotero-mcp e2e (SDK)',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

function newClient() {
  return new Client({ name: 'zotero-mcp-e2e-oauth', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
}

describe('@modelcontextprotocol/client OAuth', () => {
  test('discovers, registers, authorizes, connects and refreshes by itself', { timeout: TEST_TIMEOUT_MS * 2 }, async () => {
    const provider = new TestProvider();
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider });
    await assert.rejects(newClient().connect(first, { timeout: REQUEST_TIMEOUT_MS }), UnauthorizedError);
    assert.ok(provider.saved.client?.client_id, 'the client registered itself (DCR)');
    assert.ok(provider.authorizationUrl, 'and asked to send the user to the consent page');
    assert.equal(provider.authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(provider.authorizationUrl.searchParams.get('resource'), mcpUrl());

    // The user approves with read and write ticked.
    const callback = await approve(provider.authorizationUrl, ['zotero:read', 'zotero:write']);
    assert.equal(callback.searchParams.get('iss'), new URL(mcpUrl()).origin);
    await first.finishAuth(callback.searchParams);
    assert.ok(provider.saved.tokens?.access_token);

    const client = newClient();
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider });
    await connectValidating(client, transport);
    try {
      const wrote = await client.callTool({ name: 'fixture_write', arguments: { note: 'sdk' } }, { timeout: REQUEST_TIMEOUT_MS });
      assert.ok(!wrote.isError, textOf(wrote));

      // Revoke the access token behind the client's back: its next request gets a 401, and it
      // refreshes with its refresh token instead of bothering the user again.
      const { access_token: revokedToken, refresh_token: oldRefresh } = provider.saved.tokens;
      const revoked = await tokenRequest({ token: revokedToken, token_type_hint: 'access_token', client_id: provider.saved.client.client_id });
      assert.equal(revoked.status, 200);
      const echoed = await client.callTool({ name: 'fixture_echo', arguments: { text: 'after refresh' } }, { timeout: REQUEST_TIMEOUT_MS });
      assert.ok(!echoed.isError, textOf(echoed));
      assert.notEqual(provider.saved.tokens.access_token, revokedToken, 'a new access token');
      assert.notEqual(provider.saved.tokens.refresh_token, oldRefresh, 'and a rotated refresh token');
    } finally {
      await client.close();
    }
  });
});

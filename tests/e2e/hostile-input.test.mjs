// Hostile input at the edge, one probe per finding of the security review (issue 9), against whichever server
// scripts/e2e.sh started (the Worker under wrangler dev, then the native server). Each asserts the fixed
// behaviour; the native ring (crates/server/tests) has the finer-grained tests.

import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  WRITE_SCOPES,
  assertToolCallAnswer,
  authHeaders,
  fetchWithTimeout,
  mcpUrl,
  pkcePair,
  postForm,
  registerClient,
  authorizeUrl,
  oauthFlow,
  tokenRequest,
  workerUrl,
  READ_SCOPES,
} from './helpers.mjs';

const t = { timeout: TEST_TIMEOUT_MS };

async function register(metadata) {
  const res = await fetchWithTimeout(workerUrl('/oauth/register'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token_endpoint_auth_method: 'none', ...metadata }),
  });
  return { status: res.status, json: await res.json().catch(() => undefined) };
}

describe('hostile input is refused at the edge', () => {
  test('a token request with hundreds of parameters is invalid_request, not minutes of work', t, async () => {
    const form = { grant_type: 'authorization_code', client_id: 'x' };
    for (let i = 0; i < 2000; i += 1) form[`p${i}`] = '1';
    const res = await postForm(workerUrl('/oauth/token'), form);
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error, 'invalid_request');
    assert.match(body.error_description, /at most/);
  });

  test('registration refuses dangerous, non-loopback http and fragment redirect URIs', t, async () => {
    for (const uri of ['javascript:alert(1)', 'http://attacker.example/cb', 'https://app.example/cb#x', 'intent://x']) {
      const reply = await register({ redirect_uris: [uri] });
      assert.equal(reply.status, 400, `${uri}: ${JSON.stringify(reply.json)}`);
      assert.ok(['invalid_redirect_uri', 'invalid_client_metadata'].includes(reply.json.error), uri);
    }
  });

  test('registration takes at most ten redirect URIs', t, async () => {
    const uris = Array.from({ length: 11 }, (_, i) => `http://127.0.0.1/cb${i}`);
    const reply = await register({ redirect_uris: uris });
    assert.equal(reply.status, 400);
    assert.match(reply.json.error_description, /at most 10/);
  });

  test('a client name loses bidi and control characters and is cut to 100 characters', t, async () => {
    const name = `Claude\u202Eetirw\u202C ${'x'.repeat(300)}`;
    const reply = await register({ redirect_uris: ['http://127.0.0.1/cb'], client_name: name });
    assert.equal(reply.status, 201, JSON.stringify(reply.json));
    assert.ok(!/[\u202A-\u202E\u2066-\u2069]/.test(reply.json.client_name), 'no bidi controls');
    assert.ok([...reply.json.client_name].length <= 100, `cut: ${reply.json.client_name.length}`);
  });

  test('a look-alike loopback Origin is refused and not echoed', t, async () => {
    for (const origin of ['http://127.attacker.example', 'http://localhost.attacker.example']) {
      const res = await fetchWithTimeout(mcpUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, ...(await authHeaders()) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      await res.arrayBuffer();
      assert.equal(res.status, 403, origin);
      assert.equal(res.headers.get('access-control-allow-origin'), null, `${origin} is not echoed`);
    }
  });

  test('errors before consent are pages, never redirects to a registered URI', t, async () => {
    const client = await registerClient();
    const { challenge } = await pkcePair();
    const cases = [
      { code_challenge: null, code_challenge_method: null },
      { code_challenge: 'short' },
      { response_type: 'token' },
    ];
    for (const extra of cases) {
      const res = await fetchWithTimeout(authorizeUrl(client.client_id, challenge, extra), { redirect: 'manual' });
      const text = await res.text();
      assert.equal(res.status, 400, `${JSON.stringify(extra)}: ${res.status} ${text.slice(0, 200)}`);
      assert.equal(res.headers.get('location'), null, 'no redirect');
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    }
  });

  test('a note field given to zotero_create_items cannot carry script into Zotero', t, async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...(await authHeaders(WRITE_SCOPES)) };
    const call = async (name, args) => {
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
      const res = await fetchWithTimeout(mcpUrl(), { method: 'POST', headers, body: JSON.stringify(body) });
      const message = await res.json();
      await assertToolCallAnswer(mcpUrl(), body, headers, message);
      return message.result;
    };
    const created = await call('zotero_create_items', {
      items: [{ itemType: 'note', fields: { note: 'hi <script>alert(1)</script><img src=x onerror=alert(2)>' } }],
    });
    assert.notEqual(created.isError, true, JSON.stringify(created));
    const key = created.structuredContent.created?.[0];
    assert.ok(key, JSON.stringify(created.structuredContent));
    // What Zotero stored: the note's HTML, read from the simulator itself (SIM_URL, set by scripts/e2e.sh).
    const res = await fetchWithTimeout(`${process.env.SIM_URL}/users/1234567/items/${key}`, {
      headers: { 'zotero-api-key': 'demo' },
    });
    const html = (await res.json()).data.note;
    assert.ok(!/<script/i.test(html), html);
    assert.ok(!/<img[^>]*onerror/i.test(html), html);
    assert.match(html, /&lt;script&gt;/, 'the markup arrives as visible text');
  });

  test('a resource that is not this server is refused before consent', t, async () => {
    const client = await registerClient();
    const { challenge } = await pkcePair();
    const res = await fetchWithTimeout(authorizeUrl(client.client_id, challenge, { resource: 'https://attacker.example/mcp' }), {
      redirect: 'manual',
    });
    const text = await res.text();
    assert.equal(res.status, 400, text.slice(0, 200));
    assert.equal(res.headers.get('location'), null);
    assert.ok(text.includes(mcpUrl()), 'the page names the expected resource');
    assert.ok(!text.includes('attacker.example'), 'the foreign value is not echoed');
  });

  test('a refresh token replayed after two rotations revokes the whole grant', t, async () => {
    const first = await oauthFlow(READ_SCOPES);
    const refresh = (token) =>
      tokenRequest({ grant_type: 'refresh_token', refresh_token: token, client_id: first.clientId, resource: mcpUrl() });
    const second = await refresh(first.refresh_token);
    assert.equal(second.status, 200, second.text);
    const third = await refresh(second.json.refresh_token);
    assert.equal(third.status, 200, third.text);
    const replay = await refresh(first.refresh_token);
    assert.equal(replay.status, 400, replay.text);
    assert.equal(replay.json.error, 'invalid_grant');
    assert.match(replay.json.error_description, /revoked/);
    const after = await refresh(third.json.refresh_token);
    assert.equal(after.status, 400, `the newest refresh token went with the grant: ${after.text}`);
    const res = await fetchWithTimeout(mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${third.json.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    assert.equal(res.status, 401, 'the newest access token went with the grant');
  });

  // The Worker takes the client's address from CF-Connecting-IP, which `wrangler dev` passes through, so the
  // probe can stand for one remote address; the native server reads it from the socket (every test here is
  // 127.0.0.1, and a lock-out would stop the other tests' sign-ins), so it runs there in `make bench` only.
  const nativeSocket = process.env.E2E_TARGET === 'native' && 'the native server reads the address from the socket';
  test('simultaneous wrong passwords from one address: exactly eight are checked', { ...t, skip: nativeSocket }, async () => {
    const client = await registerClient();
    const { challenge } = await pkcePair();
    const consent = authorizeUrl(client.client_id, challenge);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        postForm(consent, { password: `wrong-${i}` }, { 'cf-connecting-ip': '203.0.113.77' }).then(async (res) => {
          await res.text();
          return res.status;
        }),
      ),
    );
    const checked = statuses.filter((s) => s === 401).length;
    const refused = statuses.filter((s) => s === 429).length;
    assert.deepEqual({ checked, refused }, { checked: 8, refused: 12 }, JSON.stringify(statuses));
  });
});

// The second review (issue 26): each probe of a medium or low finding that can be made from outside, on both
// servers. The finer-grained tests (the limits' exact values, the native-only paths) are in crates/*/tests.
describe('hostile input, second review', () => {
  async function callTool(name, args, scopes = READ_SCOPES) {
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...(await authHeaders(scopes)) };
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
    const res = await fetchWithTimeout(mcpUrl(), { method: 'POST', headers, body: JSON.stringify(body) });
    const message = await res.json();
    await assertToolCallAnswer(mcpUrl(), body, headers, message);
    return message;
  }

  const healthy = async () => {
    const message = await callTool('zotero_search', { query: 'protein', limit: 1 });
    assert.notEqual(message.result?.isError, true, JSON.stringify(message));
  };

  test('a filename template full of exploding patterns is refused before anything runs', t, async () => {
    const pattern = '(((a?){50}){50}){20}';
    const parts = Array.from({ length: 33 }, () => `{{ title replaceFrom="${pattern}" replaceTo="b" }}`);
    const message = await callTool('zotero_rename_attachments', { collectionKey: 'A5NPL7CL', template: parts.join('') });
    const refused = message.error ?? (message.result?.isError ? message.result : undefined);
    assert.ok(refused, `the template was run: ${JSON.stringify(message).slice(0, 400)}`);
    assert.match(JSON.stringify(refused), /pattern/i, 'the refusal names the patterns');
    // One such pattern alone is refused too: the bound is on each pattern, not only their number.
    const one = await callTool('zotero_rename_attachments', {
      collectionKey: 'A5NPL7CL',
      template: `{{ title replaceFrom="${pattern}" replaceTo="b" }}`,
    });
    assert.ok(one.error ?? one.result?.isError, JSON.stringify(one).slice(0, 400));
    await healthy();
  });

  test('raw note HTML is stored without script, handlers or javascript: links', t, async () => {
    const note =
      '<p>kept <strong>bold</strong></p><script>alert(1)</script><img src=x onerror=alert(2)>' +
      '<a href="javascript:alert(3)">link</a><p style="position:fixed" onclick="alert(4)">text</p>';
    const message = await callTool('zotero_notes', { action: 'create', itemKey: 'KPDKK5UT', note, raw: true }, WRITE_SCOPES);
    assert.notEqual(message.result?.isError, true, JSON.stringify(message));
    const key = message.result.structuredContent.noteKey;
    assert.ok(key, JSON.stringify(message.result.structuredContent));
    const res = await fetchWithTimeout(`${process.env.SIM_URL}/users/1234567/items/${key}`, {
      headers: { 'zotero-api-key': 'demo' },
    });
    const html = (await res.json()).data.note;
    for (const banned of [/<script/i, /onerror/i, /onclick/i, /javascript:/i, /style=/i]) {
      assert.ok(!banned.test(html), `${banned} in ${html}`);
    }
    assert.match(html, /<strong>bold<\/strong>/, 'the safe markup stays');
  });

  // A name that resolves to a private address here stands for any public-looking name an attacker points at one:
  // the literal check passes it (it is a name, not localhost); the connection must not happen. The machine's own
  // name nearly always is one (in /etc/hosts, or the resolver's rule); failing that, any other name /etc/hosts
  // gives a private address. A machine with neither reports the test skipped, which scripts/e2e.sh refuses
  // unless tests/expected-skips.txt declares it.
  test('a sourceUrl whose name resolves to this machine is never fetched', t, async (ctx) => {
    const isPrivate = (address) => /^(127\.|::1$|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(address);
    const hosts = (() => {
      try {
        return readFileSync('/etc/hosts', 'utf8');
      } catch {
        return '';
      }
    })();
    const hostsNames = hosts
      .split('\n')
      .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
      .filter(([address, ...names]) => names.length > 0 && isPrivate(address))
      .flatMap(([, ...names]) => names)
      .filter((name) => !/^localhost$|\.localhost$/i.test(name.replace(/\.$/, '')));
    let name;
    let address;
    for (const candidate of [hostname(), ...hostsNames]) {
      const found = await lookup(candidate).catch(() => ({ address: '' }));
      if (isPrivate(found.address)) {
        [name, address] = [candidate, found.address];
        break;
      }
    }
    if (!name) {
      ctx.skip(`neither ${hostname()} nor a name in /etc/hosts resolves to a private address here`);
      return;
    }
    let hits = 0;
    const server = createServer((req, res) => {
      hits += 1;
      res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4\n');
    });
    await new Promise((resolve) => server.listen(0, address, resolve));
    try {
      const sourceUrl = `http://${name}:${server.address().port}/paper.pdf`;
      const message = await callTool('zotero_put_attachment', { parentItemKey: 'KPDKK5UT', sourceUrl }, WRITE_SCOPES);
      assert.equal(message.result?.isError, true, JSON.stringify(message).slice(0, 400));
      assert.match(JSON.stringify(message.result), /Nothing was written/);
      assert.equal(hits, 0, 'the server connected to a private address');
    } finally {
      server.close();
    }
  });

  test('the previous refresh token works once; a second use, however late the thief, revokes the grant', t, async () => {
    const first = await oauthFlow(READ_SCOPES);
    const refresh = (token) =>
      tokenRequest({ grant_type: 'refresh_token', refresh_token: token, client_id: first.clientId, resource: mcpUrl() });
    const second = await refresh(first.refresh_token);
    assert.equal(second.status, 200, second.text);
    // The owner's answer was lost: one retry with the previous token is served.
    const retry = await refresh(first.refresh_token);
    assert.equal(retry.status, 200, retry.text);
    // A copy used again (the old rule let it work any number of times) is replay.
    const replay = await refresh(first.refresh_token);
    assert.equal(replay.status, 400, replay.text);
    assert.equal(replay.json.error, 'invalid_grant');
    const after = await refresh(retry.json.refresh_token);
    assert.equal(after.status, 400, `the newest refresh token went with the grant: ${after.text}`);
  });

  test('a 4 MB body of numbers is answered, and the server goes on serving', t, async () => {
    const numbers = Array.from({ length: 1_900_000 }, () => '1').join(',');
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zotero_search","arguments":{"query":[${numbers}]}}}`;
    assert.ok(body.length < 4 * 1024 * 1024, `${body.length} bytes`);
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...(await authHeaders()) };
    const res = await fetchWithTimeout(mcpUrl(), { method: 'POST', headers, body });
    const message = await res.json();
    // Refused from a count of its values, before any of them is parsed: nothing was read, not even the id.
    assert.equal(res.status, 413, JSON.stringify(message).slice(0, 300));
    assert.equal(message.error?.code, -32600, JSON.stringify(message).slice(0, 300));
    assert.match(message.error.message, /100,000|values/);
    await healthy();
  });
});

// Drives the real @cloudflare/workers-oauth-provider 0.10.3 (the TypeScript project's OAuth server) over a
// Map-backed KV, for tests/oauth_compat.rs. One JSON document in on stdin, one out on stdout.
//
//   node harness.mjs mint    {nowMs}                 -> {kv, public, confidential, pending}
//       registers clients, authorizes and exchanges codes, refreshes once, leaves one code pending,
//       and dumps the KV: what a deployment of the TypeScript project has stored.
//   node harness.mjs accept  {nowMs, kv, public, confidential, pending}  -> {results}
//       loads a KV written by the Rust server and uses its tokens, refresh tokens and pending code
//       with the TypeScript provider.
//
// The configuration is the TypeScript project's (src/index.ts there): same routes, scopes and
// defaults, props {userId, scopes}.

import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
const { OAuthProvider, getOAuthApi } = await import('@cloudflare/workers-oauth-provider');

const ORIGIN = 'https://zotero.example';
const MCP_URL = `${ORIGIN}/mcp`;
const REDIRECT = 'https://client.example/callback';
const VERIFIER = 'a-verifier-of-at-least-43-characters-0123456789abcdef';
const SCOPES = ['zotero:read', 'zotero:write'];

const input = JSON.parse(await readStdin());
// Both implementations run on one fixed clock so that lifetimes line up.
const realNow = Date.now;
Date.now = () => input.nowMs;

class MapKv {
  constructor(entries = []) {
    this.map = new Map(entries.map((e) => [e.key, { value: e.value, expiration: e.expiration ?? null }]));
  }
  nowSecs() {
    return Math.floor(Date.now() / 1000);
  }
  live(entry) {
    return entry && (entry.expiration === null || entry.expiration > this.nowSecs());
  }
  async get(key, options) {
    const entry = this.map.get(key);
    if (!this.live(entry)) return null;
    const type = typeof options === 'string' ? options : options?.type;
    return type === 'json' ? JSON.parse(entry.value) : entry.value;
  }
  async put(key, value, options = {}) {
    let expiration = null;
    if (options.expirationTtl !== undefined) expiration = this.nowSecs() + options.expirationTtl;
    else if (options.expiration !== undefined) expiration = options.expiration;
    if (expiration !== null && expiration < this.nowSecs() + 60) {
      throw new Error('KV PUT failed: 400 Invalid expiration: must be at least 60 seconds in the future');
    }
    this.map.set(key, { value: String(value), expiration });
  }
  async delete(key) {
    this.map.delete(key);
  }
  async list({ prefix = '', cursor, limit = 1000 } = {}) {
    const names = [...this.map.keys()].filter((k) => k.startsWith(prefix) && this.live(this.map.get(k))).sort();
    const start = cursor ? Number(cursor) : 0;
    const page = names.slice(start, start + limit);
    const end = start + page.length;
    return {
      keys: page.map((name) => ({ name, expiration: this.map.get(name).expiration ?? undefined })),
      list_complete: end >= names.length,
      cursor: end >= names.length ? undefined : String(end),
    };
  }
  dump() {
    return [...this.map.entries()]
      .filter(([, e]) => this.live(e))
      .map(([key, e]) => ({ key, value: e.value, expiration: e.expiration }));
  }
}

// The TypeScript project's authorization handler, minus the page: approve at once with the ticked scopes.
const authorizationHandler = {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== '/authorize') return new Response('Not found', { status: 404 });
    const oauthRequest = await env.OAUTH_PROVIDER.parseAuthRequest(request);
    const client = await env.OAUTH_PROVIDER.lookupClient(oauthRequest.clientId);
    const granted = SCOPES;
    const props = { userId: 'owner', scopes: granted };
    const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
      request: oauthRequest,
      userId: props.userId,
      metadata: { clientName: client.clientName ?? oauthRequest.clientId },
      scope: granted,
      props,
    });
    return Response.redirect(redirectTo, 303);
  },
};

const apiHandler = {
  async fetch(request, env, ctx) {
    return Response.json({ props: ctx.props });
  },
};

const options = {
  apiRoute: '/mcp',
  apiHandler,
  defaultHandler: authorizationHandler,
  authorizeEndpoint: '/authorize',
  tokenEndpoint: '/oauth/token',
  clientRegistrationEndpoint: '/oauth/register',
  clientIdMetadataDocumentEnabled: true,
  scopesSupported: SCOPES,
};
const provider = new OAuthProvider(options);

function call(env, request) {
  return provider.fetch(request, env, { waitUntil() {}, passThroughOnException() {} });
}

async function challenge() {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(VERIFIER));
  return Buffer.from(digest).toString('base64url');
}

async function registerClient(env, metadata) {
  const response = await call(
    env,
    new Request(`${ORIGIN}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Compat Client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], ...metadata }),
    }),
  );
  if (response.status !== 201) throw new Error(`registration: ${response.status} ${await response.text()}`);
  return response.json();
}

async function authorize(env, clientId) {
  const url = new URL(`${ORIGIN}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 'compat',
    code_challenge: await challenge(),
    code_challenge_method: 'S256',
    resource: MCP_URL,
  }).toString();
  const response = await call(env, new Request(url));
  if (response.status !== 303) throw new Error(`authorize: ${response.status} ${await response.text()}`);
  return new URL(response.headers.get('location')).searchParams.get('code');
}

async function token(env, form, headers = {}) {
  const response = await call(
    env,
    new Request(`${ORIGIN}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    }),
  );
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json, text };
}

async function useMcp(env, accessToken, url = MCP_URL) {
  const response = await call(
    env,
    new Request(url, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: '{}' }),
  );
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: response.status, body };
}

function basic(id, secret) {
  return { authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` };
}

async function mint() {
  const kv = new MapKv();
  const env = { OAUTH_KV: kv };
  const pub = await registerClient(env, { token_endpoint_auth_method: 'none' });
  const code = await authorize(env, pub.client_id);
  const first = await token(env, { grant_type: 'authorization_code', code, client_id: pub.client_id, code_verifier: VERIFIER, redirect_uri: REDIRECT, resource: MCP_URL });
  if (first.status !== 200) throw new Error(`exchange: ${first.text}`);
  // One rotation, so the grant carries a previous refresh token as well.
  const second = await token(env, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token, client_id: pub.client_id });
  if (second.status !== 200) throw new Error(`refresh: ${second.text}`);

  const conf = await registerClient(env, {});
  const confCode = await authorize(env, conf.client_id);
  const confTokens = await token(env, { grant_type: 'authorization_code', code: confCode, code_verifier: VERIFIER, redirect_uri: REDIRECT }, basic(conf.client_id, conf.client_secret));
  if (confTokens.status !== 200) throw new Error(`confidential exchange: ${confTokens.text}`);

  const other = await registerClient(env, { token_endpoint_auth_method: 'none' });
  const pendingCode = await authorize(env, other.client_id);
  return {
    kv: kv.dump(),
    public: { clientId: pub.client_id, accessToken: second.json.access_token, refreshToken: second.json.refresh_token, previousRefreshToken: first.json.refresh_token },
    confidential: { clientId: conf.client_id, clientSecret: conf.client_secret, accessToken: confTokens.json.access_token, refreshToken: confTokens.json.refresh_token },
    pending: { clientId: other.client_id, code: pendingCode, verifier: VERIFIER },
  };
}

async function accept() {
  // Each check starts from the KV as the Rust server left it, so that one rotation does not hide another.
  const fresh = () => ({ OAUTH_KV: new MapKv(input.kv) });
  const results = {};
  let env = fresh();
  results.mcp = await useMcp(env, input.public.accessToken);
  const unwrapped = await getOAuthApi(options, env).unwrapToken(input.public.accessToken);
  results.unwrapped = unwrapped && { props: unwrapped.grant.props, audience: unwrapped.audience, scope: unwrapped.scope };
  results.wrongAudience = await useMcp(env, input.public.accessToken, 'https://other.example/mcp');

  const refreshed = await token(env, { grant_type: 'refresh_token', refresh_token: input.public.refreshToken, client_id: input.public.clientId });
  results.refresh = { status: refreshed.status, error: refreshed.json?.error, text: refreshed.status === 200 ? undefined : refreshed.text };
  if (refreshed.status === 200) results.refreshedMcp = await useMcp(env, refreshed.json.access_token);
  // The grant as the provider rewrote it: fields it does not know (retiredRefreshTokenIds) must survive.
  const [userId, grantId] = input.public.refreshToken.split(':');
  results.grantAfterRefresh = await env.OAUTH_KV.get(`grant:${userId}:${grantId}`, { type: 'json' });
  // The KV as the provider left it and the refresh token it issued, for the Rust server to take over again.
  results.kvAfterRefresh = env.OAUTH_KV.dump();
  results.refreshedRefreshToken = refreshed.json?.refresh_token;

  env = fresh();
  const previous = await token(env, { grant_type: 'refresh_token', refresh_token: input.public.previousRefreshToken, client_id: input.public.clientId });
  results.previousRefresh = { status: previous.status, error: previous.json?.error };

  env = fresh();
  const confRefresh = await token(env, { grant_type: 'refresh_token', refresh_token: input.confidential.refreshToken }, basic(input.confidential.clientId, input.confidential.clientSecret));
  results.confidentialRefresh = { status: confRefresh.status, error: confRefresh.json?.error };
  results.confidentialMcp = await useMcp(env, input.confidential.accessToken);

  env = fresh();
  const exchanged = await token(env, { grant_type: 'authorization_code', code: input.pending.code, client_id: input.pending.clientId, code_verifier: input.pending.verifier, redirect_uri: REDIRECT });
  results.pendingExchange = { status: exchanged.status, error: exchanged.json?.error, scope: exchanged.json?.scope };
  if (exchanged.status === 200) results.pendingMcp = await useMcp(env, exchanged.json.access_token);

  env = fresh();
  await token(env, { token: input.public.refreshToken, client_id: input.public.clientId });
  results.afterRevocation = await useMcp(env, input.public.accessToken);
  return { results };
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const mode = process.argv[2];
let output;
if (mode === 'mint') output = await mint();
else if (mode === 'accept') output = await accept();
else throw new Error(`usage: node harness.mjs mint|accept < input.json (got ${mode})`);
Date.now = realNow;
process.stdout.write(JSON.stringify(output));

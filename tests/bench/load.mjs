// Load figure for SECURITY.md: many MCP tool calls and many sign-in attempts at once against one server
// (`wrangler dev` with the release Worker, and the native server), on loopback. Prints what each request got
// and the latency percentiles; exits non-zero if a tool call failed or a limiter let through more (or fewer)
// attempts than its limit. Run by scripts/bench-load.sh (`make bench`), which sets TARGETS.

import { authorizeUrl, modernRequest, oauthFlow, pkcePair, postForm, READ_SCOPES, registerClient } from '../e2e/helpers.mjs';

const TOOL_CALLS = Number(process.env.LOAD_TOOL_CALLS ?? 200);
const LOGINS = Number(process.env.LOAD_LOGINS ?? 50);
// The server's limits (crates/server/src/auth/throttle.rs).
const PER_ADDRESS = 8;
const SERVER_WIDE = 64;

const targets = (process.env.TARGETS ?? '')
  .split(' ')
  .filter(Boolean)
  .map((pair) => {
    const [name, url, spoofable] = pair.split('=');
    return { name, url, addressesSettable: spoofable === 'addresses' };
  });
if (targets.length === 0) throw new Error('TARGETS is not set: run scripts/bench-load.sh');

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const tally = (statuses) => {
  const counts = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
};
const figures = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms, max ${sorted.at(-1).toFixed(0)} ms`;
};

async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const calls = [
  { name: 'zotero_search', arguments: { query: 'protein structure', limit: 20 } },
  { name: 'zotero_get_item', arguments: { key: 'T6W7H8UE', includeChildren: true } },
  { name: 'zotero_list_collections', arguments: {} },
  { name: 'zotero_search', arguments: { query: 'climate', limit: 5 } },
];

async function toolCalls(target, auth) {
  const results = await Promise.all(
    Array.from({ length: TOOL_CALLS }, (_, i) =>
      timed(async () => {
        const { headers, body } = modernRequest('tools/call', calls[i % calls.length], { headers: { authorization: auth } });
        try {
          const response = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify(body) });
          const text = await response.text();
          return response.status === 200 && !text.includes('"isError":true') ? 'ok' : `HTTP ${response.status} ${text.slice(0, 400)}`;
        } catch (e) {
          return `network: ${e.message}`;
        }
      }),
    ),
  );
  const failures = results.filter((r) => r.value !== 'ok');
  console.log(`  ${TOOL_CALLS} concurrent tool calls: ${results.length - failures.length} ok, ${failures.length} failed; ${figures(results.map((r) => r.ms))}`);
  for (const f of failures.slice(0, 3)) console.log(`    e.g. ${f.value}`);
  return failures.length === 0;
}

/** `count` wrong passwords at once, from `address(i)`; returns the statuses and times. */
async function logins(consentUrl, count, address) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      timed(async () => {
        const headers = address ? { 'cf-connecting-ip': address(i) } : {};
        const response = await postForm(consentUrl, { password: `wrong-${i}` }, headers);
        await response.text();
        return response.status;
      }),
    ),
  );
}

function judge(label, results, expectedFailures) {
  const counts = tally(results.map((r) => r.value));
  const checked = counts[401] ?? 0;
  const refused = counts[429] ?? 0;
  const exact = checked === expectedFailures && refused === results.length - expectedFailures;
  console.log(
    `  ${label}: ${checked} checked (401), ${refused} refused (429) of ${results.length} — limit ${expectedFailures}, ` +
      `${exact ? 'exact' : `NOT EXACT ${JSON.stringify(counts)}`}; ${figures(results.map((r) => r.ms))}`,
  );
  return exact;
}

let ok = true;
for (const target of targets) {
  process.env.MCP_URL = target.url;
  console.log(`${target.name} (${target.url})`);
  const tokens = await oauthFlow(READ_SCOPES);
  ok = (await toolCalls(target, `Bearer ${tokens.access_token}`)) && ok;

  const client = await registerClient();
  const { challenge } = await pkcePair();
  const consent = authorizeUrl(client.client_id, challenge);
  if (target.addressesSettable) {
    // One address: its 8 failures, then 429 for the rest, however many arrive together.
    ok = judge(`${LOGINS} concurrent sign-ins, one address`, await logins(consent, LOGINS, () => '203.0.113.50'), PER_ADDRESS) && ok;
    // Many addresses (each under its own limit): the server-wide budget takes what the first address left.
    const wide = LOGINS + SERVER_WIDE;
    const results = await logins(consent, wide, (i) => `198.51.100.${(i % 200) + 1}`);
    ok = judge(`${wide} concurrent sign-ins, ${Math.min(wide, 200)} addresses`, results, SERVER_WIDE - PER_ADDRESS) && ok;
  } else {
    // The native server takes the address from the socket: every attempt here is 127.0.0.1.
    ok = judge(`${LOGINS} concurrent sign-ins, one address`, await logins(consent, LOGINS), PER_ADDRESS) && ok;
  }
}
process.exit(ok ? 0 : 1);

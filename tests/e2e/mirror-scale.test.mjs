// Whole-library answers over a large library, end to end: the simulator serves a synthetic group of 20,000
// items beside the demo ("Large Library", groups/100003: zotero-sim --synthetic-group, crates/sim/src/synthetic.rs),
// and the server (the Worker under wrangler dev with its local D1, or the native server with mirror.sqlite3) is
// asked about it through the official client, as a person's assistant would.
//
// - zotero_find_duplicates, called again and again while the library mirror fills: each answer says the mirror is
//   incomplete and how many items it holds, its note says the scan covered only the newest items, and the fill
//   goes on from where the last call stopped (items grow call over call, by at most a call's 20 pages);
// - once the mirror is complete, one call finds every duplicate pair the simulator planted (it says how many:
//   GET /_sim/synthetic), and says it scanned the whole library;
// - zotero_list_tags and zotero_list_collections give the library's totals;
// - a call after the fill sends the large library one request (the mirror's "changed?" check, answered 304; the
//   collections also read the saved searches): counted in the simulator's log (GET /_sim/requests). A call naming a
//   library also reads the key's access (/keys/current), which any test naming a library sends too, so it is
//   not counted here: the server's own count is in docs/performance.md, "Scale".
//
// scripts/e2e.sh runs this file against the Worker and then the native server over one simulator: each server has
// its own mirror, so each fills it from the start. Nothing here writes.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, READ_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

const LARGE = 'groups/100003';
/** A fill call reads at most this many pages of 100 (the server's mirror::CALL_BUDGET). */
const CALL_PAGES = 20;
/** More calls than a 20,000-item library needs (about 11); a fill that never ends fails here. */
const MAX_FILL_CALLS = 40;
/** A filling call reads 20 pages and writes them to the mirror: allow for a loaded machine. */
const CALL_TIMEOUT_MS = 120_000;

async function simJson(path) {
  assert.ok(process.env.SIM_URL, 'SIM_URL names the simulator (scripts/e2e.sh exports it)');
  const response = await fetch(`${process.env.SIM_URL}${path}`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(response.status, 200, `${path}: HTTP ${response.status} (is zotero-sim run with --control?)`);
  return response.json();
}

describe('a large library through the library mirror', { timeout: 20 * 60_000 }, () => {
  let client;
  /** What the simulator planted in the large group. */
  let planted;

  const call = async (name, args) => {
    const started = Date.now();
    const result = await client.callTool({ name, arguments: { ...args, library: LARGE } }, { timeout: CALL_TIMEOUT_MS });
    assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
    return { result, out: result.structuredContent, ms: Date.now() - started };
  };

  before(async () => {
    const synthetic = await simJson('/_sim/synthetic');
    planted = synthetic.libraries.find((l) => l.library === LARGE);
    assert.ok(planted, `the simulator serves no synthetic ${LARGE} (zotero-sim --synthetic-group N): ${JSON.stringify(synthetic)}`);
    assert.ok(planted.topLevel >= 20_000, `a large library: ${JSON.stringify(planted)}`);
    client = new Client({ name: 'zotero-mcp-e2e-mirror-scale', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(READ_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
  });

  it('fills the mirror call by call, saying how far it is, and then finds every duplicate the library holds', async (t) => {
    let held = 0;
    let partial = 0;
    let complete;
    for (let calls = 1; !complete; calls++) {
      assert.ok(calls <= MAX_FILL_CALLS, `the mirror is still not complete after ${MAX_FILL_CALLS} calls (${held} items)`);
      const { result, out, ms } = await call('zotero_find_duplicates', {});
      assert.ok(out.mirror, `every answer says how far the mirror is: ${JSON.stringify(out).slice(0, 300)}`);
      t.diagnostic(`call ${calls}: ${out.mirror.items} items, complete ${out.mirror.complete}, ${ms} ms`);
      if (out.mirror.complete) {
        complete = { result, out };
        break;
      }
      partial += 1;
      // The fill goes on where the last call stopped, within the call's pages (notes and attachments are items too).
      assert.ok(out.mirror.items > held, `call ${calls}: the mirror holds ${out.mirror.items} items, had ${held}: a fill never starts over`);
      assert.ok(out.mirror.items - held <= CALL_PAGES * 100, `call ${calls}: ${out.mirror.items - held} items in one call`);
      held = out.mirror.items;
      // Honest about what it scanned meanwhile: the newest items, read live.
      assert.equal(out.scanned, 500, JSON.stringify(out).slice(0, 300));
      assert.match(out.note ?? '', /still being filled/);
      assert.match(out.note ?? '', /newest 500/);
      assert.doesNotMatch(textOf(result), /whole library was scanned/);
    }
    // 20,000 top-level items and their children at 2,000 items a call: several calls before it was complete.
    assert.ok(partial >= Math.floor(planted.topLevel / (CALL_PAGES * 100)) - 1, `only ${partial} partial answers`);

    const { result, out } = complete;
    assert.ok(out.mirror.items >= planted.topLevel + planted.notes + planted.attachments, JSON.stringify(out.mirror));
    assert.equal(out.scanned, planted.topLevel, 'every top-level item examined');
    assert.equal(out.note, undefined, 'no note: nothing was left out');
    assert.match(textOf(result), /whole library was scanned/);
    // Every planted pair, however far apart (n/2 items), and nothing else.
    assert.equal(out.groupsTotal ?? out.groups.length, planted.duplicatePairs, `groups found vs pairs planted`);
    for (const group of out.groups) {
      assert.equal(group.keys.length, 2, JSON.stringify(group));
      assert.equal(group.reason, 'DOI', JSON.stringify(group));
    }
  });

  it('lists every tag and collection of the library from the mirror', async () => {
    const tags = await call('zotero_list_tags', { limit: 1000 });
    assert.equal(tags.out.mirror?.complete, true, JSON.stringify(tags.out.mirror));
    assert.equal(tags.out.totalResults, planted.tags, 'every tag of the library');
    assert.equal(tags.out.tags.length, 1000);
    assert.ok(tags.out.tags.every((tag) => tag.numItems >= 1), 'each tag is on an item');

    const collections = await call('zotero_list_collections', {});
    assert.equal(collections.out.mirror?.complete, true, JSON.stringify(collections.out.mirror));
    assert.equal(collections.out.collectionsTotal ?? collections.out.collections.length, planted.collections);
    const filed = collections.out.collections.reduce((sum, c) => sum + (c.numItems ?? 0), 0);
    assert.ok(filed >= collections.out.collections.length, `the collections hold items: ${filed}`);
  });

  it('after the fill, a whole-library call sends the library one request', async (t) => {
    for (const [name, args, most] of [
      ['zotero_find_duplicates', {}, 1],
      ['zotero_list_tags', { limit: 1000 }, 1],
      // The saved searches are read from Zotero beside the mirror's check.
      ['zotero_list_collections', {}, 2],
    ]) {
      const { last } = await simJson('/_sim/requests');
      const { out, ms } = await call(name, args);
      assert.equal(out.mirror?.complete, true, `${name}: ${JSON.stringify(out.mirror)}`);
      const sent = (await simJson(`/_sim/requests?after=${last}`)).requests;
      const own = sent.filter((r) => r.path.startsWith(`/${LARGE}/`));
      t.diagnostic(`${name}: ${own.length} request(s) to the library (${own.map((r) => `${r.path}?${r.query}`).join(', ')}), ${ms} ms`);
      assert.ok(own.length <= most, `${name} sent the library ${own.length} requests: ${JSON.stringify(own)}`);
      assert.ok(own.length >= 1, `${name} asked whether the library changed`);
    }
  });
});

// Semantic search end to end. Under wrangler dev the Worker gets the AI Search stand-in as its AI_SEARCH binding
// (tests/e2e/worker-with-ai-search.mjs), so the real wasm glue to the binding runs: the cron is fired through
// wrangler's scheduled-event test endpoint, the sync fills the index from the simulator's demo library, and
// zotero_semantic_search and zotero_reindex answer from it. The native server has no AI Search: both tools say so.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import {
  MODERN_VERSION,
  REQUEST_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  WRITE_SCOPES,
  authHeaders,
  connectValidating,
  fetchWithTimeout,
  mcpUrl,
  textOf,
  workerUrl,
} from './helpers.mjs';

const onWorker = process.env.E2E_TARGET === 'worker';
// Each case runs on one of the servers; the other reports it skipped, with why (declared in
// tests/expected-skips.txt, so scripts/e2e.sh counts it and fails on any other skip).
const workerOnly = { skip: !onWorker && 'AI Search is bound only to the Worker' };
const nativeOnly = { skip: onWorker && 'the Worker has AI Search bound' };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('semantic search over AI Search', { timeout: TEST_TIMEOUT_MS * 6 }, () => {
  let client;
  const tool = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 3 });

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-semantic', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
  });

  it('says when AI Search is not bound, and lists the tools anyway', nativeOnly, async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'zotero_semantic_search'));
    const search = await tool('zotero_semantic_search', { query: 'protein structure' });
    assert.equal(search.isError, true);
    assert.match(textOf(search), /AI Search is not bound/);
    const reindex = await tool('zotero_reindex', {});
    assert.ok(!reindex.isError, textOf(reindex));
    assert.match(reindex.structuredContent.message, /not bound/);
  });

  it('finds nothing before the first sync and says the index is empty', workerOnly, async () => {
    const result = await tool('zotero_semantic_search', { query: 'protein structure prediction' });
    assert.ok(!result.isError, textOf(result));
    assert.equal(result.structuredContent.total, 0);
    assert.match(result.structuredContent.note ?? '', /index is empty/);
  });

  it('fills the index from the cron and finds papers by meaning, with a passage', workerOnly, async () => {
    let found;
    // Each run takes up to SYNC_SUBREQUEST_BUDGET Zotero requests' worth of items; the stand-in indexes a
    // moment after an upload, as AI Search does. Fire the cron until the paper comes back.
    for (let attempt = 0; attempt < 15 && !found; attempt++) {
      const fired = await fetchWithTimeout(workerUrl('/__scheduled?cron=17+*/6+*+*+*'));
      assert.equal(fired.status, 200, await fired.text());
      await sleep(400);
      const result = await tool('zotero_semantic_search', { query: 'predicting protein structures from single sequences with geometric deep learning', limit: 5 });
      assert.ok(!result.isError, textOf(result));
      found = result.structuredContent.items.find((i) => i.key === 'T6W7H8UE');
      if (found) {
        assert.ok(found.passage && found.passage.length > 20, JSON.stringify(found));
        assert.ok(found.score > 0 && found.score <= 1, JSON.stringify(found));
        assert.match(textOf(result), /Matching passages/);
      }
    }
    assert.ok(found, 'the cron indexed the demo paper');
  });

  it('narrows by item type and years, and reindexes on demand until complete', workerOnly, async () => {
    const books = await tool('zotero_semantic_search', { query: 'zotero demo library guide', itemType: 'book' });
    assert.ok(!books.isError, textOf(books));
    assert.ok(books.structuredContent.items.every((i) => i.itemType === 'book'), JSON.stringify(books.structuredContent.items));
    let report;
    for (let attempt = 0; attempt < 20; attempt++) {
      report = await tool('zotero_reindex', {});
      assert.ok(!report.isError, textOf(report));
      if (report.structuredContent.complete) break;
    }
    assert.equal(report.structuredContent.complete, true, textOf(report));
    assert.ok(report.structuredContent.zoteroRequests <= 40, textOf(report));
  });

  it('keeps the lab group (INDEX_LIBRARIES) apart: found with its library, never in the personal one', workerOnly, async () => {
    const LAB = 'groups/100001';
    let report;
    for (let attempt = 0; attempt < 10; attempt++) {
      report = await tool('zotero_reindex', { library: LAB });
      assert.ok(!report.isError, textOf(report));
      if (report.structuredContent.complete) break;
    }
    assert.equal(report.structuredContent.complete, true, textOf(report));
    const query = 'folding intermediates seen by the lab';
    let keys = [];
    for (let attempt = 0; attempt < 10 && !keys.includes('LABPAPER'); attempt++) {
      await sleep(300);
      const inLab = await tool('zotero_semantic_search', { query, library: LAB });
      assert.ok(!inLab.isError, textOf(inLab));
      keys = inLab.structuredContent.items.map((i) => i.key);
    }
    assert.ok(keys.includes('LABPAPER'), JSON.stringify(keys));
    const personal = await tool('zotero_semantic_search', { query, limit: 12 });
    assert.ok(!personal.isError, textOf(personal));
    assert.ok(!personal.structuredContent.items.some((i) => i.key === 'LABPAPER'), JSON.stringify(personal.structuredContent.items));
    const reading = await tool('zotero_semantic_search', { query, library: 'groups/100002' });
    assert.equal(reading.isError, true);
    assert.match(textOf(reading), /does not hold library groups\/100002: add it to INDEX_LIBRARIES/);
  });

  it('reads a paper Zotero has not indexed from its stored PDF, so its passage has a page', workerOnly, async () => {
    // The apa7 sample (Q5WETDZB, crates/sim/demo/files) has no entry in Zotero's full-text index; the sync read
    // its PDF from Apache (or, with E2E_FILE_STORE=zotero, the simulator's Zotero Storage) through the PDF
    // engine, page by page (the reindex above finished the cycle).
    // Words from page 2's discussion, which only the PDF has (the item's abstract repeats page 1).
    const result = await tool('zotero_semantic_search', {
      query: 'lengthy and erudite discussion interpreting the results for the masses',
      limit: 3,
    });
    assert.ok(!result.isError, textOf(result));
    const hit = result.structuredContent.items.find((i) => i.key === 'Q5WETDZB');
    assert.ok(hit, textOf(result));
    assert.equal(hit.page, 2, JSON.stringify(hit));
    assert.match(hit.passage, /erudite discussion/i);
  });
});

// Bibliography feeds end to end: zotero_export_link mints secret URLs for the simulator's feeds group
// (zotero-sim --feeds-group, crates/sim/src/feeds_group.rs: "Thesis" of 250 items, its "Chapter 2" of 10, "Other"
// of 20, the saved search "Core reading"), and what the URLs serve, with no sign-in, is read by parsers written by
// others (tests/e2e/feeds/check_feed.py: bibtexparser, rispy, the CSL-JSON schema), as Overleaf, latexmk or Pandoc
// would read it. Through the official client in the 2026-07-28 era, with a write-scope token from the real OAuth
// flow; the client declares no elicitation, so making a link asks nothing.
//
// - every format of "Thesis": exactly its 250 items, each title as in Zotero once the format's markup is read,
//   each entry type the usual one, every pinned citation key exactly, the others unique and naming the first
//   creator and the year; no note, attachment, trashed item, nor an item of "Chapter 2" or "Other";
// - with its subcollections, 260; the saved search, the items it finds;
// - no API key, bearer token or internal address in a feed's body or headers;
// - the ETag is the library version: If-None-Match gives 304 until an item changes (POST /_sim/touch), then 200
//   with the edit and a new ETag;
// - listing shows the links without their secret; a revoked link answers 404 exactly as one never made;
// - a read-only token makes no link.
//
// scripts/e2e.sh runs this file against the Worker and then the native server over one simulator; each keeps its
// own links, and this file revokes every link it made, whatever happened.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { FORMATS, assertHolds, assertKeys, fetchFeed, parseFeed, runChecker } from './feeds/feed-helpers.mjs';
import { MODERN_VERSION, READ_SCOPES, REQUEST_TIMEOUT_MS, WRITE_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

/** The label on every link this file makes, so that its clean-up finds them. */
const MARK = 'e2e-feeds';
/** How long an edit may take to show in a feed (the server may check for changes at most this often). */
const CHANGE_DEADLINE_MS = 60_000;

async function sim(path, init = {}) {
  assert.ok(process.env.SIM_URL, 'SIM_URL names the simulator (scripts/e2e.sh exports it)');
  const response = await fetch(`${process.env.SIM_URL}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
  assert.equal(response.status, 200, `${path}: HTTP ${response.status} ${await response.clone().text()} (zotero-sim --control --feeds-group?)`);
  return response.json();
}

/** The library's version as Zotero gives it (the simulator's API, with its demo key). */
async function libraryVersion(library) {
  const response = await fetch(`${process.env.SIM_URL}/${library}/items?limit=1&format=keys`, {
    headers: { 'Zotero-API-Key': 'demo', 'Zotero-API-Version': '3' },
    signal: AbortSignal.timeout(10_000),
  });
  assert.equal(response.status, 200);
  return Number(response.headers.get('last-modified-version'));
}

const touch = (library, key, fields) =>
  sim('/_sim/touch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ library, key, fields }) });

describe('the feed checker refuses what a reader would', () => {
  const samples = new URL('./feeds/samples/', import.meta.url);
  const read = async (format, name) => {
    const { readFile } = await import('node:fs/promises');
    return runChecker(format, await readFile(new URL(name, samples)));
  };

  it('reads the hand-written files of each format', async () => {
    for (const [format, name, entries] of [['bibtex', 'good.bib', 3], ['biblatex', 'good-biblatex.bib', 3], ['csljson', 'good.json', 2], ['ris', 'good.ris', 2]]) {
      const { code, out, err } = await read(format, name);
      assert.equal(code, 0, `${name}: ${err}`);
      assert.equal(out.entries, entries, name);
      assert.equal(out.keys[0], 'thesis:2017:item-0');
      assert.equal(out.titles[0], 'Explaining glacier kinetics at 40% humidity', 'the LaTeX of the title is read');
    }
  });

  it('refuses malformed files with the parser\'s complaint', async () => {
    for (const [format, name, complaint] of [
      ['bibtex', 'bad.bib', /unbalanced brace[\s\S]*ignoring case[\s\S]*unescaped &/],
      ['bibtex', 'good-biblatex.bib', /@online is not a bibtex entry type/],
      ['csljson', 'bad.json', /csl-data.json schema[\s\S]*'journalArticle' is not one of/],
      ['ris', 'bad.ris', /2 records start \(TY\) and 1 end \(ER\)/],
    ]) {
      const { code, err } = await read(format, name);
      assert.equal(code, 1, name);
      assert.match(err, complaint, name);
    }
  });
});

describe('bibliography feeds of the feeds group', { timeout: 15 * 60_000 }, () => {
  let client;
  let token;
  let manifest;
  let library;
  let origin;
  /** Every URL minted here, for the check that no listing shows one. */
  const minted = [];

  const call = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 6 });
  const exportLink = async (args) => {
    const result = await call('zotero_export_link', { library, ...args });
    assert.ok(!result.isError, `zotero_export_link ${JSON.stringify(args)} failed: ${textOf(result)}`);
    return result.structuredContent;
  };
  /** Makes a link and checks what the answer says of it; returns { url, link }. */
  const mint = async (args) => {
    const format = args.format ?? 'bibtex';
    const out = await exportLink({ action: 'create', label: `${MARK} ${format}`, ...args });
    assert.equal(out.action, 'create');
    const pattern = new RegExp(`^${origin.replace(/[.]/g, '\\.')}/feeds/([^/.]{32})\\.${FORMATS[format].ext}$`);
    assert.match(out.url ?? '', pattern, `an absolute URL on the server's origin with a 32-character secret: ${JSON.stringify(out)}`);
    minted.push(out.url);
    assert.equal(out.links.length, 1, JSON.stringify(out));
    const [link] = out.links;
    assert.equal(link.library, library);
    assert.equal(link.format, format);
    assert.equal(link.label, `${MARK} ${format}`);
    assert.ok(link.id && link.serves && link.createdAt, JSON.stringify(link));
    return { url: out.url, link };
  };
  const planned = (...collections) => manifest.plan.items.filter((i) => collections.includes(i.collection));
  const forbiddenBut = (expected) => {
    const keep = new Set(expected.map((i) => i.key));
    return [...manifest.plan.items.filter((i) => !keep.has(i.key)), ...manifest.plan.leftOut];
  };
  /** Fetches a feed and checks the headers every 200 carries; returns the answer. */
  const fetchOk = async (url, format) => {
    const answer = await fetchFeed(url);
    assert.equal(answer.status, 200, `${url}: ${answer.status} ${answer.body.slice(0, 300)}`);
    assert.equal(answer.headers.get('content-type'), FORMATS[format].contentType);
    assert.match(answer.headers.get('cache-control') ?? '', /no-store/);
    assert.match(answer.headers.get('etag') ?? '', /^"\d+"$/, 'ETag: "<library version>"');
    return answer;
  };
  /** Revokes every link of this file (label MARK), ignoring failures: clean-up must not fail a run. */
  const sweep = async () => {
    const listed = await call('zotero_export_link', { library, action: 'list' }).catch(() => undefined);
    for (const link of listed?.structuredContent?.links ?? []) {
      if (link.label?.startsWith(MARK)) await call('zotero_export_link', { library, action: 'revoke', id: link.id }).catch(() => undefined);
    }
  };

  before(async () => {
    manifest = await sim('/_sim/feeds');
    library = manifest.library;
    origin = new URL(mcpUrl()).origin;
    assert.equal(planned(manifest.collections.thesis).length, 250, 'the simulator planted 250 items in Thesis');
    client = new Client({ name: 'zotero-mcp-e2e-feeds', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    token = headers.authorization.replace(/^Bearer /, '');
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
    await sweep();
  });

  after(async () => {
    if (client) await sweep();
    await client?.close();
  });

  for (const format of Object.keys(FORMATS)) {
    it(`serves "Thesis" as ${format}: its 250 items, as the parser reads them`, async (t) => {
      // By name, and (RIS) by key.
      const collection = format === 'ris' ? manifest.collections.thesis : manifest.collectionNames.thesis;
      const { url, link } = await mint({ format, collection, ...(format === 'csljson' ? { expiresInDays: 2 } : {}) });
      assert.equal(link.collection, manifest.collections.thesis, JSON.stringify(link));
      if (format === 'csljson') {
        const days = (Date.parse(link.expiresAt) - Date.parse(link.createdAt)) / 86_400_000;
        assert.ok(Math.abs(days - 2) < 0.01, `expiresInDays 2: ${link.createdAt} → ${link.expiresAt}`);
      }
      const started = Date.now();
      const answer = await fetchOk(url, format);
      t.diagnostic(`${format}: ${answer.body.length} bytes after ${answer.retries} answer(s) 503, ${Date.now() - started} ms`);
      assert.equal(answer.headers.get('etag'), `"${await libraryVersion(library)}"`);
      const parsed = await parseFeed(format, answer.body);
      for (const note of parsed.notes) t.diagnostic(`${format}: ${note}`);
      const expected = planned(manifest.collections.thesis);
      const records = assertHolds(format, parsed, expected, forbiddenBut(expected));

      // HEAD: the same headers, no body.
      const head = await fetchFeed(url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.body, '');
      for (const name of ['content-type', 'etag', 'cache-control']) assert.equal(head.headers.get(name), answer.headers.get(name), name);

      // Nothing that lets anyone further in.
      const secrets = { 'the bearer token': token, 'the simulator': process.env.SIM_URL, 'the simulator host': new URL(process.env.SIM_URL).host };
      for (const name of ['WEBDAV_URL', 'SOURCES_TEST_BASE_URL']) if (process.env[name]) secrets[name] = new URL(process.env[name]).host;
      const headers = [...answer.headers].map(([n, v]) => `${n}: ${v}`).join('\n');
      for (const [what, secret] of Object.entries(secrets)) {
        assert.ok(!answer.body.includes(secret) && !headers.includes(secret), `the ${format} feed shows ${what}`);
      }
      assert.doesNotMatch(`${headers}\n${answer.body}`, /\bdemo\b|zotero-api-key|ZOTERO_API_KEY/i, `the ${format} feed shows the Zotero API key`);
      // Last, so that a wrong key does not hide the checks above.
      assertKeys(format, records, expected);
    });
  }

  it('serves "Thesis" with "Chapter 2" when asked for its subcollections: 260 items', async () => {
    const { url, link } = await mint({ format: 'biblatex', collection: manifest.collectionNames.thesis, includeSubcollections: true });
    assert.equal(link.includeSubcollections, true);
    const parsed = await parseFeed('biblatex', (await fetchOk(url, 'biblatex')).body);
    const expected = planned(manifest.collections.thesis, manifest.collections.chapter2);
    assert.equal(expected.length, 260);
    assertKeys('biblatex', assertHolds('biblatex', parsed, expected, forbiddenBut(expected)), expected);
  });

  it('serves the saved search\'s results', async () => {
    const { url, link } = await mint({ format: 'csljson', savedSearch: manifest.savedSearch.name });
    assert.equal(link.savedSearch, manifest.savedSearch.key, JSON.stringify(link));
    const parsed = await parseFeed('csljson', (await fetchOk(url, 'csljson')).body);
    const expected = manifest.plan.items.filter((i) => i.core);
    assert.ok(new Set(expected.map((i) => i.collection)).size === 3, 'the search finds items of every collection');
    // The standalone note and the trashed article carry the search's tag too: neither is cited.
    assertKeys('csljson', assertHolds('csljson', parsed, expected, forbiddenBut(expected)), expected);
  });

  it('answers 304 to If-None-Match until an item changes, then 200 with the edit and a new ETag', async (t) => {
    const { url } = await mint({ format: 'bibtex', collection: manifest.collectionNames.thesis });
    const first = await fetchOk(url, 'bibtex');
    const etag = first.headers.get('etag');
    const unchanged = await fetchFeed(url, { headers: { 'if-none-match': etag } });
    assert.equal(unchanged.status, 304, `unchanged library: ${unchanged.status} ${unchanged.body.slice(0, 200)}`);
    assert.equal(unchanged.body, '');
    assert.equal(unchanged.headers.get('etag'), etag);

    const item = planned(manifest.collections.thesis).find((i) => !i.citationKey && i.itemType === 'journalArticle');
    const revised = `${item.title} (revised)`;
    await touch(library, item.key, { title: revised });
    try {
      const started = Date.now();
      let changed;
      while (!changed) {
        const answer = await fetchFeed(url, { headers: { 'if-none-match': etag } });
        if (answer.status === 200) changed = answer;
        else {
          assert.equal(answer.status, 304, `${answer.status} ${answer.body.slice(0, 200)}`);
          assert.ok(Date.now() - started < CHANGE_DEADLINE_MS, `the feed still answers 304 ${CHANGE_DEADLINE_MS / 1000} s after an edit`);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
      t.diagnostic(`the edit showed after ${Date.now() - started} ms`);
      assert.notEqual(changed.headers.get('etag'), etag);
      assert.equal(changed.headers.get('etag'), `"${await libraryVersion(library)}"`);
      const parsed = await parseFeed('bibtex', changed.body);
      assert.ok(parsed.titles.includes(revised), `the edited title is served: ${revised}`);
      assert.equal(parsed.entries, 250);
    } finally {
      await touch(library, item.key, { title: item.title });
    }
  });

  it('lists the links without their secrets, and a revoked link answers as one never made', async () => {
    const { url, link } = await mint({ format: 'ris', collection: manifest.collectionNames.other });
    const ris = await parseFeed('ris', (await fetchOk(url, 'ris')).body);
    assert.equal(ris.entries, 20);

    const listed = await exportLink({ action: 'list' });
    assert.equal(listed.action, 'list');
    assert.equal(listed.url, undefined, 'a listing gives no URL');
    const ids = listed.links.map((l) => l.id);
    assert.ok(ids.includes(link.id), `the new link is listed: ${JSON.stringify(listed.links)}`);
    const everything = JSON.stringify(listed);
    for (const made of minted) {
      const secret = made.split('/').pop().split('.')[0];
      assert.ok(!everything.includes(secret), `the listing shows the secret of ${made}`);
    }

    const revoked = await exportLink({ action: 'revoke', id: link.id });
    assert.equal(revoked.action, 'revoke');
    assert.deepEqual(revoked.links.map((l) => l.id), [link.id]);
    const gone = await fetchFeed(url);
    const madeUp = await fetchFeed(`${origin}/feeds/${randomBytes(24).toString('base64url')}.ris`);
    assert.equal(gone.status, 404);
    assert.equal(madeUp.status, 404);
    assert.equal(gone.body, madeUp.body, 'a revoked link and a made-up one answer alike');
    assert.match(gone.body, /not found/i);
    const after = await exportLink({ action: 'list' });
    assert.ok(!after.links.some((l) => l.id === link.id), 'a revoked link is not listed');
  });

  it('makes no link on a read-only token', async () => {
    const before = (await exportLink({ action: 'list' })).links.length;
    const readOnly = new Client({ name: 'zotero-mcp-e2e-feeds-readonly', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    await connectValidating(readOnly, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers: await authHeaders(READ_SCOPES) } }));
    try {
      const { tools } = await readOnly.listTools();
      const listedTool = tools.some((tool) => tool.name === 'zotero_export_link');
      let refused;
      try {
        const result = await readOnly.callTool(
          { name: 'zotero_export_link', arguments: { library, action: 'create', collection: manifest.collections.thesis, label: `${MARK} read-only` } },
          { timeout: REQUEST_TIMEOUT_MS },
        );
        assert.equal(result.isError, true, `a read-only token made a link: ${JSON.stringify(result.structuredContent)}`);
        refused = textOf(result);
      } catch (error) {
        refused = error.message;
      }
      if (listedTool) assert.match(refused, /zotero:write/, 'the refusal names the scope needed');
      else assert.match(refused, /zotero_export_link|unknown tool|not found/i);
    } finally {
      await readOnly.close();
    }
    const afterwards = (await exportLink({ action: 'list' })).links.length;
    assert.equal(afterwards, before, 'no link was made');
  });
});

// Group libraries end to end: the server (Worker under wrangler dev, or native) reaches the demo's two groups
// (zotero-sim --demo-groups, crates/sim/src/demo_groups.rs: "Protein Lab", which the key may change, and "Reading
// Group", which it may only read) through every tool's `library` argument, with the official client in the
// 2026-07-28 era. The lab's files are on the simulator's Zotero Storage, whatever store the personal library uses.
//
// Every tool of the catalogue is called with the lab's library, and the last test fails when tools/list names a
// tool this file never called with it: a new tool needs its group case here. Each answer is checked for
// something only the group has (its keys, titles, tags, collection), and each write is read back in the group and
// looked for in vain in the personal library. Every write to the reading group must be refused, and reads
// afterwards show nothing changed there.
//
// scripts/e2e.sh runs this file against the Worker and then the native server, both on the same simulator: what
// a run creates is tagged e2e-groups (collections: named so) and deleted for good at the end, and leftovers of an
// interrupted run are swept away first, so the file can run any number of times against one simulator.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { fetchFeed } from './feeds/feed-helpers.mjs';
import { MODERN_VERSION, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, WRITE_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

const PERSONAL = 'users/1234567';
const LAB = 'groups/100001';
const READING = 'groups/100002';
// What crates/sim/src/demo_groups.rs puts in the groups.
const LAB_PAPER = 'LABPAPER';
const LAB_PDF = 'LABPDF22';
const LAB_NOTE = 'LABN2TE3';
const LAB_MEETING = 'LABMEET2';
const READING_BOOK = 'RDGBK234';
// A paper of the personal demo library (crates/sim/demo/library.json), absent from both groups.
const PERSONAL_PAPER = 'T6W7H8UE';

/** The tag on everything this file creates, and the prefix of its collections' names. */
const MARK = 'e2e-groups';
const TAGGED = [{ tag: MARK }];

// Imported from the metadata services' stand-in (tests/e2e/sources-stub.mjs: CrossRef's recorded answer, and
// OpenAlex's, whose PDF the stand-in serves).
const DOI = '10.1371/journal.pone.0000030';
const DOI_TITLE = 'Triose Phosphate Isomerase Deficiency Is Caused by Altered Dimerization\u2013Not Catalytic Inactivity\u2013of the Mutant Enzymes';

const onWorker = process.env.E2E_TARGET === 'worker';

/**
 * The groups the simulator serves beside the demo's, as its control endpoint lists them: the synthetic ones
 * (scripts/e2e.sh adds a large one for mirror-scale.test.mjs: zotero-sim --synthetic-group) and the feeds group
 * (feeds.test.mjs: zotero-sim --feeds-group).
 */
async function syntheticGroups() {
  if (!process.env.SIM_URL) return [];
  const read = (path) => fetch(`${process.env.SIM_URL}${path}`, { signal: AbortSignal.timeout(10_000) });
  const groups = [];
  const synthetic = await read('/_sim/synthetic');
  if (synthetic.ok) {
    const { libraries } = await synthetic.json();
    groups.push(...libraries.map((l) => l.library).filter((l) => l.startsWith('groups/')));
  }
  const feeds = await read('/_sim/feeds');
  if (feeds.ok) groups.push((await feeds.json()).library);
  return groups;
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The libraries the semantic index holds besides the personal one: INDEX_LIBRARIES of the test config, which
 * scripts/servers.sh gives the Worker and the native server alike.
 */
function indexLibraries() {
  const config = readFileSync(new URL('./wrangler.test.toml', import.meta.url), 'utf8');
  const vars = config.split(/^\[vars\][ \t]*$/m)[1]?.split(/^\[/m)[0] ?? '';
  const setting = vars.match(/^INDEX_LIBRARIES\s*=\s*"([^"]*)"/m)?.[1] ?? '';
  return setting.split(/[\s,]+/).filter(Boolean);
}

describe('group libraries through the library argument', { timeout: TEST_TIMEOUT_MS * 16 }, () => {
  let client;
  let catalogue = [];
  /** Tool name → the libraries it was called with. */
  const calledWith = new Map();
  /** Keys this run created, by library, deleted for good at the end whatever happened. */
  const made = { [LAB]: new Set(), [PERSONAL]: new Set() };
  const madeCollections = new Set();

  /** A call the coverage check does not count (the clean-ups). */
  const raw = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 3 });
  const tool = (name, args = {}) => {
    if (!calledWith.has(name)) calledWith.set(name, new Set());
    calledWith.get(name).add(args.library ?? PERSONAL);
    return raw(name, args);
  };
  const ok = async (name, args) => {
    const result = await tool(name, args);
    assert.ok(!result.isError, `${name} ${JSON.stringify(args).slice(0, 200)} failed: ${textOf(result)}`);
    return result;
  };
  const failed = async (name, args) => {
    const result = await tool(name, args);
    assert.equal(result.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)} should fail: ${textOf(result)}`);
    return textOf(result);
  };
  /** The key is an item of `library`, as get_item reads it there. */
  const itemIn = async (key, library) => (await ok('zotero_get_item', { key, library })).structuredContent.item;
  /** The key is no item of `library`: Zotero answers 404 on that library's path. */
  const absentFrom = async (key, library) => {
    const args = library === PERSONAL ? { key } : { key, library };
    assert.match(await failed('zotero_get_item', args), new RegExp(`/${library}/items/${key} failed with 404`));
  };
  /** A write to the reading group: refused by the key's rights, naming the library and the tool. */
  const refusedInReading = async (name, args) => {
    const text = await failed(name, { ...args, library: READING });
    assert.match(text, new RegExp(`may only read library ${READING}, so \`${name}\` wrote nothing there`));
  };
  /** Deletes for good, ignoring what is already gone: clean-up must not fail a run. */
  const purge = async (keys, library) => {
    if (keys.length === 0) return;
    const args = library === PERSONAL ? { keys, permanent: true } : { keys, permanent: true, library };
    await raw('zotero_delete_items', args).catch(() => undefined);
  };
  /** Everything tagged MARK (trash included, children too) and every MARK collection in the lab. */
  const sweep = async () => {
    for (const library of [LAB, PERSONAL]) {
      const keys = new Set(made[library]);
      for (const itemType of [undefined, 'attachment']) {
        const args = { tags: [MARK], includeTrashed: true, limit: 100, ...(itemType ? { itemType } : {}) };
        const found = await raw('zotero_search', library === PERSONAL ? args : { ...args, library });
        for (const item of found.structuredContent?.items ?? []) keys.add(item.key);
      }
      await purge([...keys], library);
      made[library].clear();
    }
    const listed = await raw('zotero_list_collections', { query: MARK, library: LAB });
    for (const c of listed.structuredContent?.collections ?? []) madeCollections.add(c.key);
    for (const collectionKey of madeCollections) {
      await raw('zotero_manage_collections', { action: 'delete', collectionKey, library: LAB }).catch(() => undefined);
    }
    madeCollections.clear();
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-libraries', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
    catalogue = (await client.listTools()).tools.map((t) => t.name);
    await sweep();
  });

  after(async () => {
    if (client) await sweep().catch(() => undefined);
    await client?.close();
  });

  it('lists the personal library and both groups, with rights and stores, whatever library the call names', async () => {
    const indexed = indexLibraries();
    const large = await syntheticGroups();
    for (const library of [LAB, READING, undefined]) {
      const listed = await ok('zotero_list_libraries', library ? { library } : {});
      const byPath = Object.fromEntries(listed.structuredContent.libraries.map((l) => [l.library, l]));
      const what = `${library}: ${JSON.stringify(listed.structuredContent)}`;
      assert.deepEqual(Object.keys(byPath).sort(), [LAB, READING, PERSONAL, ...large].sort(), what);
      assert.equal(byPath[PERSONAL].default, true, 'the default library stays the configured one');
      assert.equal(byPath[LAB].default, false, what);
      assert.equal(byPath[LAB].name, 'Protein Lab');
      assert.equal(byPath[LAB].type, 'group');
      assert.equal(byPath[LAB].write, true);
      assert.equal(byPath[LAB].fileStore, 'Zotero Storage');
      assert.equal(byPath[READING].name, 'Reading Group');
      assert.equal(byPath[READING].write, false);
      assert.equal(byPath[READING].fileStore, 'Zotero Storage');
      // Only the Worker has AI Search (the stand-in); there the index holds the personal library and INDEX_LIBRARIES.
      assert.equal(byPath[PERSONAL].semanticIndex, onWorker, what);
      assert.equal(byPath[LAB].semanticIndex, onWorker && indexed.includes(LAB), what);
      assert.equal(byPath[READING].semanticIndex, onWorker && indexed.includes(READING), what);
    }
  });

  it('searches each group by its path or its name, finding only that group\'s items', async () => {
    for (const library of [LAB, 'Protein Lab']) {
      const found = await ok('zotero_search', { query: 'folding intermediates', library });
      assert.deepEqual(found.structuredContent.items.map((i) => i.key), [LAB_PAPER], library);
      assert.match(textOf(found), /Folding intermediates seen by the lab/);
    }
    const byTag = await ok('zotero_search', { tags: ['folding'], library: LAB });
    assert.deepEqual(byTag.structuredContent.items.map((i) => i.key), [LAB_PAPER]);
    // The collection's paper, with its note (child items of a filed item are listed with it).
    const inMeeting = await ok('zotero_search', { collectionKey: LAB_MEETING, library: LAB });
    assert.deepEqual(inMeeting.structuredContent.items.map((i) => i.key).sort(), [LAB_NOTE, LAB_PAPER].sort());
    for (const library of [READING, 'Reading Group']) {
      const found = await ok('zotero_search', { query: 'folding', library });
      assert.deepEqual(found.structuredContent.items.map((i) => i.key), [READING_BOOK], library);
    }
    const personal = await ok('zotero_search', { query: 'folding intermediates seen by the lab' });
    assert.ok(!personal.structuredContent.items.some((i) => i.key === LAB_PAPER), 'the lab\'s paper is not in the personal library');
    const unknown = await failed('zotero_search', { query: 'x', library: 'groups/999' });
    assert.match(unknown, /cannot reach library groups\/999/);
  });

  it('reads a group\'s item with its children; a key of one library is not found in another', async () => {
    const paper = await ok('zotero_get_item', { key: LAB_PAPER, includeChildren: true, library: LAB });
    assert.equal(paper.structuredContent.item.title, 'Folding intermediates seen by the lab');
    assert.equal(paper.structuredContent.item.year, '2024');
    assert.deepEqual(paper.structuredContent.item.collections, [LAB_MEETING]);
    const children = paper.structuredContent.children.map((c) => c.key).sort();
    for (const key of [LAB_PDF, LAB_NOTE]) assert.ok(children.includes(key), JSON.stringify(children));
    const book = await itemIn(READING_BOOK, READING);
    assert.equal(book.title, 'A reading group\'s folding classic');
    await absentFrom(LAB_PAPER, PERSONAL);
    await absentFrom(READING_BOOK, LAB);
    await absentFrom(PERSONAL_PAPER, LAB);
    await absentFrom(PERSONAL_PAPER, READING);
  });

  it('lists each group\'s collections, tags and notes', async () => {
    const labCollections = await ok('zotero_list_collections', { library: LAB });
    const meeting = labCollections.structuredContent.collections.find((c) => c.key === LAB_MEETING);
    assert.equal(meeting?.name, 'Lab meeting', JSON.stringify(labCollections.structuredContent));
    const inMeeting = await ok('zotero_list_collections', { collectionKey: LAB_MEETING, topOnly: true, library: LAB });
    assert.deepEqual(inMeeting.structuredContent.items.map((i) => i.key), [LAB_PAPER]);
    const withChildren = await ok('zotero_list_collections', { collectionKey: LAB_MEETING, library: LAB });
    assert.deepEqual(withChildren.structuredContent.items.map((i) => i.key).sort(), [LAB_NOTE, LAB_PDF, LAB_PAPER].sort());
    const readingCollections = await ok('zotero_list_collections', { library: READING });
    assert.deepEqual(readingCollections.structuredContent.collections ?? [], []);
    assert.match(await failed('zotero_list_collections', { collectionKey: LAB_MEETING }), /no collection LABMEET2 in this library/);
    const personalCollections = await ok('zotero_list_collections', {});
    assert.ok(!(personalCollections.structuredContent.collections ?? []).some((c) => c.key === LAB_MEETING));

    const labTags = await ok('zotero_list_tags', { library: LAB });
    const folding = labTags.structuredContent.tags.find((t) => t.tag === 'folding');
    assert.equal(folding?.numItems, 1, JSON.stringify(labTags.structuredContent.tags));
    const readingTags = await ok('zotero_list_tags', { library: READING });
    assert.deepEqual(readingTags.structuredContent.tags, [], 'the reading group\'s book has no tags');

    const onPaper = await ok('zotero_notes', { action: 'list', itemKey: LAB_PAPER, library: LAB });
    const note = onPaper.structuredContent.notes.find((n) => n.key === LAB_NOTE);
    assert.match(note?.text ?? '', /Discussed on Monday/, JSON.stringify(onPaper.structuredContent));
    assert.equal(note.parentItem, LAB_PAPER);
    const everyNote = await ok('zotero_notes', { action: 'list', library: LAB });
    assert.deepEqual(everyNote.structuredContent.notes.map((n) => n.key), [LAB_NOTE], 'the lab holds one note');
    const searched = await ok('zotero_notes', { action: 'search', query: 'Monday', library: LAB });
    assert.deepEqual(searched.structuredContent.notes.map((n) => n.key), [LAB_NOTE]);
    const readingNotes = await ok('zotero_notes', { action: 'list', library: READING });
    assert.deepEqual(readingNotes.structuredContent.notes ?? [], []);
  });

  it('reads the lab\'s PDF from Zotero Storage, and each group\'s annotations', async () => {
    const page = await ok('zotero_read_attachment', { itemKey: LAB_PDF, fromPage: 1, toPage: 1, library: LAB });
    assert.equal(page.structuredContent.source, 'zotero-storage');
    assert.match(page.structuredContent.text, /demonstration paper/);
    const info = await ok('zotero_read_attachment', { itemKey: LAB_PDF, mode: 'info', library: LAB });
    assert.equal(info.structuredContent.file.storedIn, 'Zotero Storage');
    assert.equal(info.structuredContent.file.filename, 'Weiss - 2024.pdf');
    assert.equal(info.structuredContent.file.parentItem, LAB_PAPER);
    const byParent = await ok('zotero_read_attachment', { itemKey: LAB_PAPER, mode: 'info', library: LAB });
    assert.equal(byParent.structuredContent.attachmentKey, LAB_PDF, 'a regular item is read through its PDF');
    await ok('zotero_read_attachment', { itemKey: LAB_PDF, mode: 'outline', library: LAB });
    const noFile = await failed('zotero_read_attachment', { itemKey: READING_BOOK, library: READING });
    assert.match(noFile, /item RDGBK234 has no stored file attachment/);

    const labAnnotations = await ok('zotero_annotations', { itemKey: LAB_PAPER, library: LAB });
    assert.equal(labAnnotations.structuredContent.action, 'list');
    assert.ok(Array.isArray(labAnnotations.structuredContent.annotations));
    const readingAnnotations = await ok('zotero_annotations', { itemKey: READING_BOOK, library: READING });
    assert.deepEqual(readingAnnotations.structuredContent.annotations, []);
    await absentFrom(LAB_PDF, PERSONAL);
  });

  it('answers ChatGPT\'s search and fetch in a group, with ids that find the group again', async () => {
    const found = await ok('search', { query: 'folding intermediates', library: LAB });
    const id = `${LAB}/items/${LAB_PAPER}`;
    const hit = found.structuredContent.results.find((r) => r.id === id);
    assert.ok(hit, JSON.stringify(found.structuredContent));
    assert.equal(hit.url, `https://www.zotero.org/${LAB}/items/${LAB_PAPER}`);
    assert.deepEqual(JSON.parse(textOf(found)), found.structuredContent, 'the text is the same JSON');
    // The id alone leads to the group (ChatGPT passes no library); with the library named, the same answer.
    for (const args of [{ id }, { id, library: LAB }]) {
      const fetched = await ok('fetch', args);
      assert.equal(fetched.structuredContent.id, id);
      assert.equal(fetched.structuredContent.metadata.attachmentKey, LAB_PDF);
      assert.match(fetched.structuredContent.text, /\[page 1\]\n[\s\S]*demonstration paper/);
    }
    const clash = await failed('fetch', { id, library: READING });
    assert.match(clash, /give one of them/);
  });

  it('follows a group\'s changes with a cursor of that group, refused for another library', async () => {
    const base = await ok('zotero_changes', { library: LAB });
    assert.equal(base.structuredContent.cursor.library, LAB);
    const since = base.structuredContent.cursor;
    const again = await ok('zotero_changes', { library: LAB, since });
    assert.equal(again.structuredContent.fromVersion, since.version);
    assert.ok(again.structuredContent.cursor, JSON.stringify(again.structuredContent));
    assert.match(await failed('zotero_changes', { since }), /the cursor is for library groups\/100001/);
  });

  it('gathers evidence from a group\'s item, its PDF read by pages from Zotero Storage', async () => {
    const answer = await ok('zotero_retrieve', { itemKeys: [LAB_PAPER], query: 'demonstration paper', library: LAB });
    const top = answer.structuredContent.passages[0];
    assert.equal(top.source, 'fulltext', JSON.stringify(answer.structuredContent));
    assert.equal(top.sourceKey, LAB_PDF);
    assert.equal(top.page, 1);
    const read = answer.structuredContent.items[0].attachments[0];
    assert.equal(read.textSource, 'zotero-storage');
    assert.equal(read.coverage.complete, true);
  });

  it('checks a reference list against a group\'s own items', async () => {
    const text = '1. Weiss A. Folding intermediates seen by the lab. J Lab Res. 2024;1:1-9.';
    const inLab = await ok('zotero_check_references', { text, checkRegistry: false, library: LAB });
    const [lab] = inLab.structuredContent.references;
    assert.equal(lab.outcome, 'matched', JSON.stringify(inLab.structuredContent));
    assert.equal(lab.itemKey, LAB_PAPER);
    assert.equal(lab.matchedBy, 'title');
    const inPersonal = await ok('zotero_check_references', { text, checkRegistry: false });
    assert.equal(inPersonal.structuredContent.references[0].outcome, 'unresolved');
  });

  it('plans renames and scans for duplicates from each group\'s own items', async () => {
    const template = '{{ year suffix=" - " }}{{ firstCreator }}';
    const plan = await ok('zotero_rename_attachments', { itemKeys: [LAB_PAPER], template, library: LAB });
    assert.equal(plan.structuredContent.applied, false);
    assert.deepEqual(plan.structuredContent.planned, [{ attachmentKey: LAB_PDF, from: 'Weiss - 2024.pdf', to: '2024 - Weiss.pdf', status: 'planned' }]);
    const byCollection = await ok('zotero_rename_attachments', { collectionKey: LAB_MEETING, template, library: LAB });
    assert.deepEqual(byCollection.structuredContent.planned.map((p) => p.attachmentKey), [LAB_PDF]);
    const readingPlan = await ok('zotero_rename_attachments', { itemKeys: [READING_BOOK], library: READING });
    assert.deepEqual(readingPlan.structuredContent.planned, [], 'the book has no stored file');

    const readingScan = await ok('zotero_find_duplicates', { library: READING });
    assert.equal(readingScan.structuredContent.scanned, 1, 'the reading group holds one item');
    assert.deepEqual(readingScan.structuredContent.groups, []);
    const labScan = await ok('zotero_find_duplicates', { library: LAB });
    assert.ok(labScan.structuredContent.scanned >= 1, textOf(labScan));
    assert.ok(!labScan.structuredContent.groups.some((g) => g.keys.includes(LAB_PAPER)), textOf(labScan));
  });

  it('searches a group by meaning only where the semantic index holds it, and says why elsewhere', async () => {
    const indexed = indexLibraries();
    for (const library of [LAB, READING]) {
      if (!indexed.includes(library)) {
        const refusal = new RegExp(`does not hold library ${library}: add it to INDEX_LIBRARIES`);
        assert.match(await failed('zotero_semantic_search', { query: 'protein folding', library }), refusal);
        assert.match(await failed('zotero_reindex', { library }), refusal);
      } else if (!onWorker) {
        assert.match(await failed('zotero_semantic_search', { query: 'protein folding', library }), /AI Search is not bound/);
        const reindex = await ok('zotero_reindex', { library });
        assert.match(reindex.structuredContent.message, /not bound/);
      } else {
        let report;
        for (let attempt = 0; attempt < 10; attempt++) {
          report = await ok('zotero_reindex', { library });
          if (report.structuredContent.complete) break;
        }
        assert.equal(report.structuredContent.complete, true, textOf(report));
        const [query, expected] = library === LAB ? ['folding intermediates seen by the lab', LAB_PAPER] : ['a reading group\'s folding classic', READING_BOOK];
        let items = [];
        for (let attempt = 0; attempt < 10 && !items.some((i) => i.key === expected); attempt++) {
          await sleep(300);
          items = (await ok('zotero_semantic_search', { query, library })).structuredContent.items;
        }
        assert.ok(items.some((i) => i.key === expected), JSON.stringify(items));
        // Nothing from the personal library comes back.
        for (const { key } of items) await absentFrom(key, PERSONAL);
      }
    }
  });

  it('lists and runs the lab\'s saved search, and searches within it; the reading group has none', async () => {
    const listed = await ok('zotero_list_collections', { library: LAB });
    const names = listed.structuredContent.savedSearches.map((s) => s.name);
    assert.deepEqual(names, ['Folding papers'], JSON.stringify(listed.structuredContent));
    assert.equal(listed.structuredContent.savedSearches[0].runnable, true);
    const run = await ok('zotero_search', { savedSearch: 'folding papers', library: LAB });
    assert.deepEqual(run.structuredContent.items.map((i) => i.key), ['LABPAPER']);
    const within = await ok('zotero_search', { query: 'intermediates', savedSearch: 'Folding papers', library: LAB });
    assert.deepEqual(within.structuredContent.items.map((i) => i.key), ['LABPAPER']);
    const personal = await ok('zotero_list_collections', {});
    assert.ok(!personal.structuredContent.savedSearches.some((s) => s.name === 'Folding papers'), 'the lab\'s search is the lab\'s');
    const reading = await ok('zotero_list_collections', { library: READING });
    assert.deepEqual(reading.structuredContent.savedSearches, []);
  });

  it('passes the library to the test fixtures too, refusing one the key cannot reach', async () => {
    const echoed = await ok('fixture_echo', { text: 'lab', library: LAB });
    assert.equal(echoed.structuredContent.echoed, 'lab');
    const written = await ok('fixture_write', { note: 'nothing is stored', library: LAB });
    assert.equal(written.structuredContent.written, true);
    for (const name of ['fixture_echo', 'fixture_write']) {
      const args = name === 'fixture_echo' ? { text: 'x' } : { note: 'x' };
      assert.match(await failed(name, { ...args, library: 'groups/999' }), /cannot reach library groups\/999/);
    }
  });

  // The writes to the lab share these: one article, then its note, file, collection, duplicate and import.
  let article;
  let noteKey;
  let attachment;
  let pdf;

  it('creates and updates an item in the lab, not in the personal library', async () => {
    const created = await ok('zotero_create_items', {
      items: [{ itemType: 'journalArticle', title: 'Group probe: chaperone kinetics', creators: [{ firstName: 'Gus', lastName: 'Groupson' }], tags: TAGGED, fields: { date: '2021' } }],
      library: LAB,
    });
    [article] = created.structuredContent.created;
    assert.match(article ?? '', /^[A-Z0-9]{8}$/, textOf(created));
    made[LAB].add(article);
    assert.equal((await itemIn(article, LAB)).title, 'Group probe: chaperone kinetics');
    await absentFrom(article, PERSONAL);
    const found = await ok('zotero_search', { query: 'chaperone kinetics', library: LAB });
    assert.deepEqual(found.structuredContent.items.map((i) => i.key), [article]);

    const updated = await ok('zotero_update_item', { keys: [article], fields: { date: '2022' }, addTags: ['e2e-groups-updated'], library: LAB });
    assert.deepEqual(updated.structuredContent.updated, [article]);
    const read = await itemIn(article, LAB);
    assert.equal(read.year, '2022');
    assert.ok(read.tags.includes('e2e-groups-updated'), JSON.stringify(read.tags));

    // The undo journal (KV on the Worker, redb natively) turns the update back, in the lab only.
    const id = textOf(updated).match(/zotero_undo with id "([0-9a-z]+-[0-9a-f]{4})"/)?.[1];
    assert.ok(id, textOf(updated));
    const listed = await ok('zotero_undo', { limit: 50, library: LAB });
    const entry = listed.structuredContent.entries.find((e) => e.id === id);
    assert.equal(entry?.library, LAB, JSON.stringify(listed.structuredContent));
    assert.match(await failed('zotero_undo', { id }), new RegExp(`made in ${LAB}`));
    const undone = await ok('zotero_undo', { id, library: LAB });
    assert.deepEqual(undone.structuredContent.objects.map((o) => [o.key, o.outcome]), [[article, 'restored']]);
    const back = await itemIn(article, LAB);
    assert.equal(back.year, '2021');
    assert.ok(!back.tags.includes('e2e-groups-updated'), JSON.stringify(back.tags));
    // The undo is journalled too: undoing it brings the update back, for the steps below.
    const undoId = textOf(undone).match(/zotero_undo with id "([0-9a-z]+-[0-9a-f]{4})"/)?.[1];
    const redone = await ok('zotero_undo', { id: undoId, library: LAB });
    assert.deepEqual(redone.structuredContent.objects.map((o) => o.outcome), ['restored']);
    const again = await itemIn(article, LAB);
    assert.equal(again.year, '2022');
    assert.ok(again.tags.includes('e2e-groups-updated'), JSON.stringify(again.tags));
  });

  it('files the item in a new lab collection, renames it, and deletes it', async () => {
    assert.ok(article, 'the create step ran');
    const name = `${MARK} shelf`;
    const created = await ok('zotero_manage_collections', { action: 'create', name, library: LAB });
    const collectionKey = created.structuredContent.collectionKey;
    madeCollections.add(collectionKey);
    const labCollections = await ok('zotero_list_collections', { query: MARK, library: LAB });
    assert.deepEqual(labCollections.structuredContent.collections.map((c) => c.key), [collectionKey]);
    const personal = await ok('zotero_list_collections', { query: MARK });
    assert.deepEqual(personal.structuredContent.collections ?? [], [], 'the collection is not in the personal library');

    const filed = await ok('zotero_manage_collections', { action: 'addItems', collectionKey, itemKeys: [article], library: LAB });
    assert.deepEqual(filed.structuredContent.affected, [article]);
    const inside = await ok('zotero_list_collections', { collectionKey, library: LAB });
    assert.deepEqual(inside.structuredContent.items.map((i) => i.key), [article]);
    const renamed = await ok('zotero_manage_collections', { action: 'rename', collectionKey, name: `${MARK} shelf 2`, library: LAB });
    assert.equal(renamed.structuredContent.previousName, name);
    const taken = await ok('zotero_manage_collections', { action: 'removeItems', collectionKey, itemKeys: [article], library: LAB });
    assert.deepEqual(taken.structuredContent.affected, [article]);
    assert.deepEqual((await itemIn(article, LAB)).collections, []);
    const deleted = await ok('zotero_manage_collections', { action: 'delete', collectionKey, library: LAB });
    assert.equal(deleted.structuredContent.changed, true);
    madeCollections.delete(collectionKey);
    const remaining = await ok('zotero_list_collections', { query: MARK, library: LAB });
    assert.deepEqual(remaining.structuredContent.collections ?? [], []);
  });

  it('writes, appends to and deletes a note on the lab\'s item', async () => {
    assert.ok(article, 'the create step ran');
    const created = await ok('zotero_notes', { action: 'create', itemKey: article, note: 'Seen at the **lab** meeting.', tags: TAGGED, library: LAB });
    noteKey = created.structuredContent.noteKey;
    assert.match(noteKey ?? '', /^[A-Z0-9]{8}$/);
    made[LAB].add(noteKey);
    assert.equal(created.structuredContent.parentItem, article);
    await absentFrom(noteKey, PERSONAL);
    const appended = await ok('zotero_notes', { action: 'update', itemKey: noteKey, note: 'Follow-up planned.', append: true, library: LAB });
    assert.equal(appended.structuredContent.appended, true);
    const listed = await ok('zotero_notes', { action: 'list', itemKey: article, library: LAB });
    assert.match(listed.structuredContent.notes.find((n) => n.key === noteKey)?.text ?? '', /lab meeting[\s\S]*Follow-up planned/);
    const deleted = await ok('zotero_notes', { action: 'delete', itemKey: noteKey, library: LAB });
    assert.notEqual(deleted.structuredContent.alreadyTrashed, true);
    assert.equal((await itemIn(noteKey, LAB)).inTrash, true);
  });

  it('stores a PDF on the lab\'s Zotero Storage, reads, indexes, highlights, renames and deletes it', async () => {
    assert.ok(article, 'the create step ran');
    // The apa7 sample (LPPL, crates/sim/demo/files/LICENSES.md): two pages, plain prose on page 1.
    pdf = readFileSync(new URL('../../crates/sim/demo/files/shortsample.pdf', import.meta.url));
    const put = await ok('zotero_put_attachment', {
      parentItemKey: article,
      base64Data: pdf.toString('base64'),
      filename: 'e2e group paper.pdf',
      tags: TAGGED,
      library: LAB,
    });
    attachment = put.structuredContent.attachmentKey;
    made[LAB].add(attachment);
    assert.equal(put.structuredContent.storedIn, 'Zotero Storage');
    assert.equal(put.structuredContent.md5, createHash('md5').update(pdf).digest('hex'));
    assert.equal(put.structuredContent.recorded, true);
    await absentFrom(attachment, PERSONAL);
    const info = await ok('zotero_read_attachment', { itemKey: attachment, mode: 'info', library: LAB });
    assert.equal(info.structuredContent.file.storedIn, 'Zotero Storage');
    assert.equal(info.structuredContent.file.parentItem, article);

    const page = await ok('zotero_read_attachment', { itemKey: attachment, fromPage: 1, toPage: 1, library: LAB });
    assert.equal(page.structuredContent.source, 'zotero-storage');
    // Six words in a row from the page, as a model would quote them.
    const line = page.structuredContent.text.split('\n').map((l) => l.trim()).find((l) => l.split(/\s+/).length >= 6);
    assert.ok(line, page.structuredContent.text.slice(0, 300));
    const quote = line.split(/\s+/).slice(0, 6).join(' ');

    // The text written back to the lab's full-text index: read from there next, and found by a search in the lab.
    const whole = await ok('zotero_read_attachment', { itemKey: attachment, writeBackIndex: true, library: LAB });
    assert.equal(whole.structuredContent.indexWriteBack, 'The text was written to Zotero\'s full-text index.', textOf(whole));
    const again = await ok('zotero_read_attachment', { itemKey: attachment, library: LAB });
    assert.equal(again.structuredContent.source, 'zotero-index');
    const fullText = await ok('zotero_search', { query: quote, qmode: 'everything', library: LAB });
    const hit = fullText.structuredContent.items.find((i) => i.key === article);
    assert.equal(hit?.matchedAttachment?.key, attachment, JSON.stringify(fullText.structuredContent.items));

    const highlighted = await ok('zotero_annotations', { action: 'create', itemKey: attachment, page: 1, text: quote, comment: 'group e2e', tags: TAGGED, library: LAB });
    const annotation = highlighted.structuredContent.created;
    made[LAB].add(annotation.annotationKey);
    assert.equal(annotation.attachmentKey, attachment);
    assert.equal(annotation.page, 1);
    const listed = await ok('zotero_annotations', { itemKey: article, library: LAB });
    const found = listed.structuredContent.annotations.find((a) => a.key === annotation.annotationKey);
    assert.equal(found?.comment, 'group e2e', JSON.stringify(listed.structuredContent));
    await absentFrom(annotation.annotationKey, PERSONAL);

    const template = '{{ firstCreator suffix=" - " }}{{ year }}';
    const dry = await ok('zotero_rename_attachments', { itemKeys: [attachment], template, library: LAB });
    assert.deepEqual(dry.structuredContent.planned, [{ attachmentKey: attachment, from: 'e2e group paper.pdf', to: 'Groupson - 2022.pdf', status: 'planned' }]);
    const applied = await ok('zotero_rename_attachments', { itemKeys: [attachment], template, apply: true, library: LAB });
    assert.equal(applied.structuredContent.planned[0]?.status, 'renamed', textOf(applied));
    const renamed = await ok('zotero_read_attachment', { itemKey: attachment, mode: 'info', library: LAB });
    assert.equal(renamed.structuredContent.file.filename, 'Groupson - 2022.pdf');
    assert.equal(renamed.structuredContent.file.storedIn, 'Zotero Storage');

    const deleted = await ok('zotero_delete_attachment', { attachmentKey: attachment, permanent: true, library: LAB });
    assert.equal(deleted.structuredContent.filesRemoved, true, textOf(deleted));
    assert.match(deleted.structuredContent.note, /Zotero Storage/);
    made[LAB].delete(attachment);
    made[LAB].delete(annotation.annotationKey);
    await absentFrom(attachment, LAB);
  });

  it('finds the article\'s copy in the lab and merges it there', async () => {
    assert.ok(article, 'the create step ran');
    const created = await ok('zotero_create_items', {
      items: [{ itemType: 'journalArticle', title: 'Group probe: chaperone kinetics', creators: [{ firstName: 'Gus', lastName: 'Groupson' }], tags: TAGGED, fields: { date: '2022' } }],
      library: LAB,
    });
    const [copy] = created.structuredContent.created;
    made[LAB].add(copy);
    const scan = await ok('zotero_find_duplicates', { itemType: 'journalArticle', library: LAB });
    const group = scan.structuredContent.groups.find((g) => g.keys.includes(article));
    assert.deepEqual([...(group?.keys ?? [])].sort(), [article, copy].sort(), textOf(scan));
    const personal = await ok('zotero_find_duplicates', { itemType: 'journalArticle' });
    assert.ok(!personal.structuredContent.groups.some((g) => g.keys.includes(article)), 'the personal library\'s scan does not see the lab');
    const merged = await ok('zotero_find_duplicates', { mergeKeys: [article, copy], merge: true, library: LAB });
    const outcome = merged.structuredContent.groups[0];
    assert.equal(outcome?.merged, true, textOf(merged));
    assert.deepEqual(outcome.trashed, [copy]);
    assert.equal((await itemIn(copy, LAB)).inTrash, true);
    assert.ok(!(await itemIn(article, LAB)).inTrash, 'the kept item stays');
  });

  it('imports a reference into the lab, looking for copies in the lab only', async () => {
    // A copy in the personal library does not count as one in the lab.
    const mine = await ok('zotero_create_items', {
      items: [{ itemType: 'journalArticle', title: DOI_TITLE, creators: [{ firstName: 'Markus', lastName: 'Ralser' }], tags: TAGGED, fields: { date: '2006', DOI } }],
    });
    const [personalCopy] = mine.structuredContent.created;
    made[PERSONAL].add(personalCopy);

    const imported = await ok('zotero_import_reference', { identifier: `doi:${DOI}`, tags: TAGGED, library: LAB });
    const out = imported.structuredContent;
    assert.equal(out.results[0]?.status, 'created', textOf(imported));
    assert.ok(!out.existingKeys.includes(personalCopy), textOf(imported));
    const imported0 = out.itemKey;
    made[LAB].add(imported0);
    assert.equal((await itemIn(imported0, LAB)).doi, DOI);
    await absentFrom(imported0, PERSONAL);
    // The open-access PDF went where the lab keeps its files.
    assert.match(out.attachmentKey ?? '', /^[A-Z0-9]{8}$/, textOf(imported));
    const info = await ok('zotero_read_attachment', { itemKey: out.attachmentKey, mode: 'info', library: LAB });
    assert.equal(info.structuredContent.file.storedIn, 'Zotero Storage');
    assert.equal(info.structuredContent.file.parentItem, imported0);

    const again = await ok('zotero_import_reference', { identifier: DOI, library: LAB });
    assert.deepEqual(again.structuredContent.existingKeys, [imported0], textOf(again));
    assert.equal(again.structuredContent.itemKey, undefined);

    await ok('zotero_delete_attachment', { attachmentKey: out.attachmentKey, permanent: true, library: LAB });
  });

  it('moves the lab\'s items to its trash, then deletes them for good', async () => {
    assert.ok(article, 'the create step ran');
    const trashed = await ok('zotero_delete_items', { keys: [article], library: LAB });
    assert.deepEqual(trashed.structuredContent.deleted, [article]);
    assert.equal((await itemIn(article, LAB)).inTrash, true);
    // The note first: deleting its parent takes it along, so the two at once could race.
    if (noteKey) {
      const note = await ok('zotero_delete_items', { keys: [noteKey], permanent: true, library: LAB });
      assert.deepEqual(note.structuredContent.deleted, [noteKey], textOf(note));
      made[LAB].delete(noteKey);
    }
    const keys = [...made[LAB]];
    const gone = await ok('zotero_delete_items', { keys, permanent: true, library: LAB });
    assert.deepEqual([...gone.structuredContent.deleted].sort(), [...keys].sort(), textOf(gone));
    for (const key of [...keys, noteKey].filter(Boolean)) await absentFrom(key, LAB);
    made[LAB].clear();
    await purge([...made[PERSONAL]], PERSONAL);
    made[PERSONAL].clear();
    const left = await ok('zotero_search', { tags: [MARK], includeTrashed: true, library: LAB });
    assert.deepEqual(left.structuredContent.items, [], 'nothing of this run is left in the lab');
  });

  it('refuses every write to the reading group, and nothing there changes', async () => {
    const pdfData = (pdf ?? readFileSync(new URL('../../crates/sim/demo/files/shortsample.pdf', import.meta.url))).toString('base64');
    await refusedInReading('zotero_create_items', { items: [{ itemType: 'book', title: `${MARK}: not here`, tags: TAGGED }] });
    await refusedInReading('zotero_update_item', { keys: [READING_BOOK], addTags: [MARK], fields: { date: '2000' } });
    await refusedInReading('zotero_delete_items', { keys: [READING_BOOK] });
    await refusedInReading('zotero_delete_items', { keys: [READING_BOOK], permanent: true });
    await refusedInReading('zotero_manage_collections', { action: 'create', name: `${MARK} not here` });
    await refusedInReading('zotero_notes', { action: 'create', itemKey: READING_BOOK, note: 'not here', tags: TAGGED });
    await refusedInReading('zotero_notes', { action: 'update', itemKey: READING_BOOK, note: 'not here' });
    await refusedInReading('zotero_notes', { action: 'delete', itemKey: READING_BOOK });
    await refusedInReading('zotero_annotations', { action: 'create', itemKey: READING_BOOK, type: 'note', page: 1, comment: 'not here' });
    await refusedInReading('zotero_put_attachment', { parentItemKey: READING_BOOK, base64Data: pdfData, filename: 'not here.pdf', tags: TAGGED });
    await refusedInReading('zotero_delete_attachment', { attachmentKey: READING_BOOK, permanent: true });
    await refusedInReading('zotero_rename_attachments', { itemKeys: [READING_BOOK], apply: true });
    await refusedInReading('zotero_import_reference', { identifier: DOI, tags: TAGGED, attachPdf: false });
    await refusedInReading('zotero_find_duplicates', { mergeKeys: [READING_BOOK, READING_BOOK], merge: true });
    await refusedInReading('zotero_read_attachment', { itemKey: READING_BOOK, writeBackIndex: true });

    // Read back: the group holds its one book, unchanged, and nothing else.
    const everything = await ok('zotero_search', { includeTrashed: true, itemType: '-note', library: READING });
    assert.deepEqual(everything.structuredContent.items.map((i) => i.key), [READING_BOOK]);
    const attachments = await ok('zotero_search', { includeTrashed: true, itemType: 'attachment', library: READING });
    assert.deepEqual(attachments.structuredContent.items, []);
    const book = await itemIn(READING_BOOK, READING);
    assert.ok(!book.inTrash, 'the book is not in the trash');
    assert.equal(book.year, '1999');
    assert.deepEqual(book.tags, []);
    const notes = await ok('zotero_notes', { action: 'list', library: READING });
    assert.deepEqual(notes.structuredContent.notes ?? [], []);
    const collections = await ok('zotero_list_collections', { library: READING });
    assert.deepEqual(collections.structuredContent.collections ?? [], []);
    const imported = await ok('zotero_search', { query: 'Triose Phosphate Isomerase', library: READING });
    assert.deepEqual(imported.structuredContent.items, []);
  });

  it('serves a group\'s collection as a feed, and a group it may only read', async () => {
    const made = [];
    try {
      const lab = await ok('zotero_export_link', { collection: LAB_MEETING, format: 'bibtex', label: MARK, library: LAB });
      made.push([lab.structuredContent.links[0].id, LAB]);
      assert.equal(lab.structuredContent.links[0].library, LAB);
      const labFeed = await fetchFeed(lab.structuredContent.url);
      assert.equal(labFeed.status, 200, labFeed.body.slice(0, 300));
      assert.match(labFeed.body, /Folding intermediates seen by the lab/);
      assert.doesNotMatch(labFeed.body, /reading group/i);
      // Nothing in a library the key may only read changes by serving it.
      const reading = await ok('zotero_export_link', { format: 'csljson', label: MARK, library: READING });
      made.push([reading.structuredContent.links[0].id, READING]);
      const readingFeed = await fetchFeed(reading.structuredContent.url);
      assert.equal(readingFeed.status, 200, readingFeed.body.slice(0, 300));
      assert.deepEqual(JSON.parse(readingFeed.body).map((i) => i.title), ["A reading group's folding classic"]);
      const listed = await ok('zotero_export_link', { action: 'list', library: LAB });
      assert.ok(listed.structuredContent.links.some((l) => l.id === made[0][0]), textOf(listed));
    } finally {
      for (const [id, library] of made) await raw('zotero_export_link', { action: 'revoke', id, library }).catch(() => undefined);
    }
  });

  it('called every listed tool with the lab\'s library', () => {
    const notWithLab = catalogue.filter((name) => !calledWith.get(name)?.has(LAB));
    assert.deepEqual(notWithLab, [], `listed tools without a group case in tests/e2e/libraries.test.mjs (never called with library ${LAB}): ${notWithLab.join(', ')}`);
  });
});

// zotero_check_references end to end: the LaTeX manuscript and .bib of crates/server/tests/refcheck/ checked
// against the demo library (zotero-sim) through the Worker under wrangler dev and the native server, with the
// registries answered by tests/e2e/sources-stub.mjs (recorded CrossRef answers: the retracted Wakefield paper,
// a bioRxiv preprint with its published version, and a bibliographic search over the works it has recorded),
// driven by the official client in the 2026-07-28 era. Read-only: nothing is imported, so both servers' runs see
// the same library.
//
// Unlike the native test (crates/server/tests/tools_check_references.rs), the Wakefield paper is not in the e2e
// library: here it is a work not in the library, flagged from its DOI's CrossRef record.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, READ_SCOPES, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

const manuscript = (name) => readFileSync(new URL(`../../crates/server/tests/refcheck/${name}`, import.meta.url), 'utf8');
const TEX = manuscript('manuscript.tex');
const BIB = manuscript('manuscript.bib');

const kinds = (reference) => (reference.flags ?? []).map((flag) => flag.kind);

describe('checking a manuscript\'s references (demo library, recorded CrossRef answers)', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let client;
  let out;
  let text;
  const tool = (args) =>
    client.callTool({ name: 'zotero_check_references', arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 3 });
  const ok = async (args) => {
    const result = await tool(args);
    assert.ok(!result.isError, `zotero_check_references failed: ${textOf(result)}`);
    return result;
  };
  const reference = (label) => {
    const found = out.references.find((r) => r.label === label);
    assert.ok(found, `no reference ${label} in ${JSON.stringify(out.references.map((r) => r.label))}`);
    return found;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-check-references', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(READ_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
    const result = await ok({ text: TEX, bibtex: BIB, limit: 60 });
    out = result.structuredContent;
    text = textOf(result);
  });

  after(async () => {
    await client?.close();
  });

  it('reads the LaTeX source with its .bib, every reference in one call', () => {
    assert.equal(out.format, 'latex');
    assert.equal(out.totalReferences, 9);
    assert.equal(out.references.length, 9);
    assert.equal(out.nextCursor, undefined, JSON.stringify(out));
    assert.deepEqual(out.counts, { matched: 5, notInLibrary: 3, unresolved: 1, flagged: 6, retracted: 1 });
    assert.match(text, /5 matched · 3 not in the library · 1 unresolved · 6 flagged · \*\*1 retracted\*\*/);
  });

  it('matches a citation key in the library and names the year the .bib gets wrong', () => {
    const whitfield = reference('whitfield2021geometric');
    assert.equal(whitfield.outcome, 'matched');
    assert.equal(whitfield.itemKey, 'T6W7H8UE');
    assert.equal(whitfield.matchedBy, 'citationKey');
    const year = whitfield.disagreements?.find((d) => d.field === 'year');
    assert.deepEqual({ manuscript: year?.manuscript, library: year?.library }, { manuscript: '2020', library: '2021' }, JSON.stringify(whitfield));
  });

  it('shows the cited item\'s passages for the citing sentence', () => {
    const [check] = reference('whitfield2021geometric').support ?? [];
    assert.ok(check, 'a support check for the citing sentence');
    assert.equal(check.verdict, 'passagesFound', JSON.stringify(check));
    assert.equal(check.line, 6);
    assert.ok(check.passages.length > 0);
  });

  it('flags a retracted paper not in the library from its CrossRef record', () => {
    const wakefield = reference('wakefield1998ileal');
    assert.equal(wakefield.outcome, 'notInLibrary', JSON.stringify(wakefield));
    assert.equal(wakefield.registry?.foundBy, 'identifier');
    assert.deepEqual(kinds(wakefield), ['retracted', 'corrected']);
    assert.match(wakefield.flags[0].detail, /Retraction Watch/);
    assert.match(text, /\*\*retracted\*\*/);
  });

  it('resolves a preprint not in the library and points at its published version', () => {
    const fenner = reference('fenner2016roadmap');
    assert.equal(fenner.outcome, 'notInLibrary', JSON.stringify(fenner));
    assert.equal(fenner.registry?.source, 'CrossRef');
    assert.deepEqual(kinds(fenner), ['preprintPublished']);
    assert.match(fenner.flags[0].detail, /10\.1038\/s41597-019-0031-8/);
  });

  it('finds a reference without identifiers by CrossRef\'s bibliographic search, with high confidence', () => {
    const cermine = reference('tkaczyk2015cermine');
    assert.equal(cermine.outcome, 'notInLibrary', JSON.stringify(cermine));
    assert.equal(cermine.registry?.foundBy, 'bibliographicSearch');
    assert.equal(cermine.registry?.confidence, 'high');
    assert.equal(cermine.registry?.doi, '10.1007/s10032-015-0249-8');
  });

  it('flags a key cited but missing from the .bib, and an entry never cited', () => {
    const missing = reference('smith2020missing');
    assert.equal(missing.outcome, 'unresolved');
    assert.deepEqual(kinds(missing), ['missingFromBib']);
    assert.match(missing.reason, /smith2020missing/);
    const never = reference('halvorsen2021feeding');
    assert.ok(kinds(never).includes('neverCited'), JSON.stringify(never));
  });

  it('continues a shorter call with its cursor, and refuses to import on a read-only connection', async () => {
    const first = (await ok({ text: TEX, bibtex: BIB, limit: 5, checkSupport: false })).structuredContent;
    assert.equal(first.references.length, 5);
    assert.ok(first.nextCursor, JSON.stringify(first));
    const rest = (await ok({ text: TEX, bibtex: BIB, limit: 5, checkSupport: false, cursor: first.nextCursor })).structuredContent;
    assert.equal(rest.firstPosition, 6);
    assert.equal(rest.nextCursor, undefined);
    assert.deepEqual(
      [...first.references, ...rest.references].map((r) => r.label),
      out.references.map((r) => r.label),
    );

    const refused = await tool({ text: TEX, bibtex: BIB, import: true });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /zotero:write|read-only/);
  });
});

// References without identifiers, found (or not) by CrossRef's bibliographic search alone. The stand-in searches
// the works it has recorded as CrossRef ranks them, so what is found depends on what the server asked: each
// positive case below is a different work, and the near miss is a reference to the journal version of a paper
// whose preprint is the search's best candidate (same title and authors, three years apart): it must be named
// as not taken, never reported as the work, and the candidate's notices (a preprint's published version, a
// retraction) are not reported as the reference's.
describe('CrossRef\'s bibliographic search finds a reference\'s work, and refuses a near miss', { timeout: TEST_TIMEOUT_MS * 2 }, () => {
  const LIST = [
    'We build on earlier roadmaps [1] and imaging methods [2], and on the published roadmap [3].',
    '',
    'References',
    '',
    '1. Fenner M, Crosas M, Grethe JS, Kennedy D, Hermjakob H, Rocca-Serra P, et al. A data citation roadmap for scholarly data repositories. bioRxiv. 2016.',
    '2. Sankar M, Nieminen K, Ragni L, Xenarios I, Hardtke CS. Automated quantitative histology reveals vascular morphodynamics during Arabidopsis hypocotyl secondary growth. eLife. 2014;3.',
    '3. Fenner M, Crosas M, Grethe JS, Kennedy D, Hermjakob H, Rocca-Serra P, et al. A data citation roadmap for scholarly data repositories. Sci Data. 2019;6:28.',
    '4. Qwertzuiop Xanthippe. Xylophonic quokkas, Quzhou. 1850.',
    '5. Okonkwo B. Ileal-lymphoid-nodular hyperplasia in adults: a case series. Gut. 2011;60:100-4.',
    '',
  ].join('\n');
  let client;
  let out;
  const at = (position) => {
    const found = out.references.find((r) => r.position === position);
    assert.ok(found, `no reference at ${position} in ${JSON.stringify(out.references.map((r) => r.position))}`);
    return found;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-check-search', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(READ_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
    const result = await client.callTool(
      { name: 'zotero_check_references', arguments: { text: LIST, checkSupport: false } },
      { timeout: REQUEST_TIMEOUT_MS * 3 },
    );
    assert.ok(!result.isError, `zotero_check_references failed: ${textOf(result)}`);
    out = result.structuredContent;
    assert.equal(out.references.length, 5, JSON.stringify(out.references));
  });

  after(async () => {
    await client?.close();
  });

  it('finds a preprint cited without its DOI, and points at its published version', () => {
    const roadmap = at(1);
    assert.equal(roadmap.outcome, 'notInLibrary', JSON.stringify(roadmap));
    assert.equal(roadmap.registry?.foundBy, 'bibliographicSearch');
    assert.equal(roadmap.registry?.confidence, 'high');
    assert.equal(roadmap.registry?.doi, '10.1101/097196');
    assert.deepEqual(kinds(roadmap), ['preprintPublished']);
  });

  it('finds a journal article cited without its DOI', () => {
    const histology = at(2);
    assert.equal(histology.outcome, 'notInLibrary', JSON.stringify(histology));
    assert.equal(histology.registry?.foundBy, 'bibliographicSearch');
    assert.equal(histology.registry?.confidence, 'high');
    assert.equal(histology.registry?.doi, '10.7554/elife.01567');
  });

  it('does not take the preprint for the journal version cited, and names it as the candidate refused', () => {
    const published = at(3);
    assert.equal(published.outcome, 'unresolved', JSON.stringify(published));
    assert.equal(published.registry, undefined, JSON.stringify(published));
    // Nor is the preprint's news (its published version) reported as the cited work's.
    assert.deepEqual(kinds(published), [], JSON.stringify(published));
    assert.match(published.reason, /closest candidate \("A Data Citation Roadmap for Scholarly Data Repositories"\).*not taken/);
  });

  it('does not flag a reference with the retraction of a candidate it does not agree with', () => {
    // CrossRef's record for this title is the retracted Wakefield paper; the reference gives another year and
    // another first author, so it is not that paper, and its retraction is not this reference's.
    const other = at(5);
    assert.equal(other.outcome, 'unresolved', JSON.stringify(other));
    assert.match(other.reason, /closest candidate \("RETRACTED: Ileal-lymphoid-nodular hyperplasia.*not taken/);
    assert.deepEqual(kinds(other), [], JSON.stringify(other));
  });

  it('says when the search finds nothing at all', () => {
    const nothing = at(4);
    assert.equal(nothing.outcome, 'unresolved', JSON.stringify(nothing));
    assert.equal(nothing.registry, undefined);
    assert.ok(nothing.tried?.includes('CrossRef found no candidate'), JSON.stringify(nothing));
  });
});

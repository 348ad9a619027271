// Imports and duplicates end to end: the server (Worker under wrangler dev, or native) resolves a DOI against the
// metadata services' stand-in (tests/e2e/sources-stub.mjs, recorded real answers), creates the item in the
// simulator, downloads the open-access PDF OpenAlex names and stores it on the real WebDAV server (Apache
// mod_dav; with E2E_FILE_STORE=zotero, on the simulator's Zotero Storage), then finds the copy a second import
// makes and merges it — all through the official client in the 2026-07-28 era.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, WRITE_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

const DOI = '10.1371/journal.pone.0000030';

describe('import by identifier, with its PDF, and merging the duplicate', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let client;
  let first;
  let second;
  const tool = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 2 });
  const ok = async (name, args) => {
    const result = await tool(name, args);
    assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
    return result;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-sources', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
  });

  it('imports a DOI with CrossRef metadata and stores OpenAlex\'s PDF', async () => {
    // allowDuplicate: the other server's run may already have imported it into the same simulator.
    const imported = await ok('zotero_import_reference', { identifier: `https://doi.org/${DOI}`, allowDuplicate: true });
    const out = imported.structuredContent;
    assert.equal(out.source, 'CrossRef');
    assert.match(out.title, /^Triose Phosphate Isomerase Deficiency/);
    first = out.itemKey;
    assert.match(first, /^[A-Z0-9]{8}$/);
    assert.match(out.attachmentKey ?? '', /^[A-Z0-9]{8}$/, textOf(imported));

    const item = await ok('zotero_get_item', { key: first });
    assert.equal(item.structuredContent.item.doi, DOI);
    const info = await ok('zotero_read_attachment', { itemKey: out.attachmentKey, mode: 'info' });
    assert.equal(info.structuredContent.file.onWebDav, true);
    assert.equal(info.structuredContent.file.storedIn, process.env.E2E_FILE_STORE === 'zotero' ? 'Zotero Storage' : 'WebDAV');
    assert.equal(info.structuredContent.file.parentItem, first);
    const pdf = readFileSync(fileURLToPath(new URL('../../crates/sim/demo/files/shortsample.pdf', import.meta.url)));
    assert.equal(info.structuredContent.file.md5, createHash('md5').update(pdf).digest('hex'), 'the stored file is the PDF served');
    const text = await ok('zotero_read_attachment', { itemKey: out.attachmentKey, forceFile: true, maxPages: 1 });
    assert.ok(text.structuredContent.text.length > 100, 'the stored PDF reads as text');
  });

  it('finds the copy already in the library instead of importing it again', async () => {
    const again = await ok('zotero_import_reference', { identifier: `doi:${DOI}` });
    assert.ok(again.structuredContent.existingKeys.includes(first), textOf(again));
    assert.equal(again.structuredContent.itemKey, undefined);
    assert.match(textOf(again), /allowDuplicate=true/);
  });

  it('lists a forced second copy as a duplicate and merges it into the first', async () => {
    const forced = await ok('zotero_import_reference', { identifier: DOI, allowDuplicate: true, attachPdf: false });
    second = forced.structuredContent.itemKey;
    const dry = await ok('zotero_find_duplicates', { mergeKeys: [first, second] });
    assert.equal(dry.structuredContent.groups[0].merged, false);
    const merged = await ok('zotero_find_duplicates', { mergeKeys: [first, second], merge: true });
    const group = merged.structuredContent.groups[0];
    assert.equal(group.merged, true, textOf(merged));
    assert.deepEqual(group.trashed, [second]);
    const kept = await ok('zotero_get_item', { key: first });
    assert.match(textOf(kept), /Triose Phosphate Isomerase/);
  });

  it('is refused on a read-only connection, with nothing asked or written', async () => {
    const readOnly = new Client({ name: 'zotero-mcp-e2e-sources-ro', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    await connectValidating(readOnly, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers: await authHeaders() } }));
    try {
      const refused = await readOnly.callTool({ name: 'zotero_import_reference', arguments: { identifier: DOI } }, { timeout: REQUEST_TIMEOUT_MS });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /read-only/);
      const merge = await readOnly.callTool(
        { name: 'zotero_find_duplicates', arguments: { mergeKeys: [first, second], merge: true } },
        { timeout: REQUEST_TIMEOUT_MS },
      );
      assert.equal(merge.isError, true);
    } finally {
      await readOnly.close();
    }
  });
});

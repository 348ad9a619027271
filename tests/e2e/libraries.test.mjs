// Group libraries end to end: the server (Worker under wrangler dev, or native) reaches the demo's two groups
// (zotero-sim --demo-groups: "Protein Lab", which the key may change, and "Reading Group", which it may only read)
// through every tool's `library` argument, with the official client in the 2026-07-28 era. The lab's PDF is on
// the simulator's Zotero Storage, whatever store the personal library uses.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, WRITE_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

const LAB = 'groups/100001';
const READING = 'groups/100002';

describe('group libraries through the library argument', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let client;
  const tool = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 2 });
  const ok = async (name, args) => {
    const result = await tool(name, args);
    assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
    return result;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-libraries', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
  });

  it('lists the personal library and both groups, with what the key may do', async () => {
    const listed = await ok('zotero_list_libraries', {});
    const byPath = Object.fromEntries(listed.structuredContent.libraries.map((l) => [l.library, l]));
    assert.equal(byPath['users/1234567']?.default, true, JSON.stringify(listed.structuredContent));
    assert.equal(byPath[LAB]?.name, 'Protein Lab');
    assert.equal(byPath[LAB]?.write, true);
    assert.equal(byPath[LAB]?.fileStore, 'Zotero Storage');
    assert.equal(byPath[READING]?.write, false);
  });

  it('searches a group by its path and by its name, and reads its PDF from Zotero Storage', async () => {
    for (const library of [LAB, 'Protein Lab']) {
      const found = await ok('zotero_search', { query: 'folding intermediates', library });
      assert.deepEqual(found.structuredContent.items.map((i) => i.key), ['LABPAPER'], library);
    }
    const page = await ok('zotero_read_attachment', { itemKey: 'LABPDF22', fromPage: 1, toPage: 1, library: LAB });
    assert.equal(page.structuredContent.source, 'zotero-storage');
    assert.match(page.structuredContent.text, /demonstration paper/);
  });

  it('writes to the lab, and refuses a write to the reading group with nothing written', async () => {
    const created = await ok('zotero_notes', { action: 'create', itemKey: 'LABPAPER', note: 'e2e: seen', library: LAB });
    const noteKey = created.structuredContent.noteKey;
    assert.match(noteKey, /^[A-Z0-9]{8}$/);
    await ok('zotero_notes', { action: 'delete', itemKey: noteKey, library: LAB });
    const refused = await tool('zotero_create_items', { items: [{ itemType: 'book', title: 'e2e: not here' }], library: READING });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /may only read library groups\/100002/);
    const still = await ok('zotero_search', { query: 'e2e: not here', library: READING });
    assert.equal(still.structuredContent.items.length, 0);
  });

  it('names what is wrong with a library it cannot reach', async () => {
    const unknown = await tool('zotero_search', { query: 'x', library: 'groups/999' });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /cannot reach library groups\/999/);
  });
});

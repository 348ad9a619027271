// The Zotero tools end to end: the release Worker under wrangler dev, its Zotero the simulator with the demo
// library (scripts/e2e.sh), driven by @modelcontextprotocol/client 2.x in the 2026-07-28 era with a token from
// the real OAuth flow. Search, read an item, create → update → delete, and a note round trip.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, WRITE_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

describe('Zotero tools through the Worker (demo library in zotero-sim)', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let client;
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
    assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
    return result;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-tools', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
  });

  it('searches, including a phrase that only occurs inside a PDF', async () => {
    const byTitle = await call('zotero_search', { query: 'protein', limit: 5 });
    assert.ok(byTitle.structuredContent.total > 0);
    assert.match(textOf(byTitle), /key: [A-Z0-9]{8}/);
    const fullText = await call('zotero_search', { query: 'stochastic gradient annealing' });
    const hit = fullText.structuredContent.items.find((i) => i.key === 'AIHLBG3Z');
    assert.ok(hit, 'the parent of the matching PDF is found');
    assert.equal(hit.matchedAttachment.key, 'ZJ6BP9I4');
  });

  it('reads an item with its children', async () => {
    const result = await call('zotero_get_item', { key: 'T6W7H8UE', includeChildren: true });
    assert.equal(result.structuredContent.item.key, 'T6W7H8UE');
    assert.ok(result.structuredContent.item.abstract);
    assert.ok(result.structuredContent.children.some((c) => c.itemType === 'attachment'));
  });

  it('creates, updates and deletes an item', async () => {
    const created = await call('zotero_create_items', {
      items: [{ itemType: 'journalArticle', title: 'End-to-end article', creators: [{ lastName: 'Tester', firstName: 'Eve' }] }],
    });
    const [key] = created.structuredContent.created;
    assert.match(key, /^[A-Z0-9]{8}$/);
    const updated = await call('zotero_update_item', { keys: [key], fields: { date: '2026' }, addTags: ['e2e'] });
    assert.deepEqual(updated.structuredContent.updated, [key]);
    const again = await call('zotero_update_item', { keys: [key], addTags: ['e2e'] });
    assert.deepEqual(again.structuredContent.skipped, [key], 'nothing to change is not a write');
    const read = await call('zotero_get_item', { key });
    assert.equal(read.structuredContent.item.year, '2026');
    assert.ok(read.structuredContent.item.tags.includes('e2e'));
    const deleted = await call('zotero_delete_items', { keys: [key] });
    assert.deepEqual(deleted.structuredContent.deleted, [key]);
    const trashed = await call('zotero_get_item', { key });
    assert.equal(trashed.structuredContent.item.inTrash, true);
  });

  it('writes a note from Markdown and reads it back as text', async () => {
    const created = await call('zotero_notes', {
      action: 'create',
      itemKey: 'T6W7H8UE',
      title: 'E2E note',
      note: 'Some **bold** words.\n\n- a point\n- <script>alert(1)</script>',
    });
    const noteKey = created.structuredContent.noteKey;
    const listed = await call('zotero_notes', { action: 'list', itemKey: 'T6W7H8UE' });
    const note = listed.structuredContent.notes.find((n) => n.key === noteKey);
    assert.ok(note, 'the new note is listed on its parent');
    assert.match(note.text, /bold/);
    assert.match(note.text, /<script>alert\(1\)<\/script>/, 'markup typed by the user comes back as text');
    const raw = await call('zotero_notes', { action: 'list', itemKey: 'T6W7H8UE', raw: true });
    const html = raw.structuredContent.notes.find((n) => n.key === noteKey).html;
    assert.ok(!html.includes('<script>'), 'the stored HTML carries no live script');
    await call('zotero_notes', { action: 'delete', itemKey: noteKey });
  });

  it('refuses writes on a read-only token', async () => {
    const readOnly = new Client({ name: 'zotero-mcp-e2e-readonly', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    await connectValidating(readOnly, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers: await authHeaders() } }));
    try {
      const result = await readOnly.callTool({ name: 'zotero_create_items', arguments: { items: [{ itemType: 'book', title: 'x' }] } }, { timeout: REQUEST_TIMEOUT_MS });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /zotero:write/);
    } finally {
      await readOnly.close();
    }
  });
});

// Attachment files end to end: the server (Worker under wrangler dev, or native) reads the demo library's files
// from a real WebDAV server — Apache httpd with mod_dav on loopback, filled by zotero-sim-files in Zotero's
// layout (scripts/e2e.sh) — through the PDF engine, with the official client in the 2026-07-28 era.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, READ_SCOPES, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, authHeaders, mcpUrl, textOf } from './helpers.mjs';

describe('attachment files from WebDAV (Apache mod_dav)', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let client;
  const call = async (args) => {
    const result = await client.callTool({ name: 'zotero_read_attachment', arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
    assert.ok(!result.isError, `zotero_read_attachment failed: ${textOf(result)}`);
    return result;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-attachments', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(READ_SCOPES);
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }), {
      timeout: REQUEST_TIMEOUT_MS,
    });
  });

  after(async () => {
    await client?.close();
  });

  it('reads a whole paper from Zotero\'s index and pages of it from the PDF on WebDAV', async () => {
    const indexed = await call({ itemKey: 'T6W7H8UE' });
    assert.equal(indexed.structuredContent.attachmentKey, '93WJRKG5');
    assert.equal(indexed.structuredContent.source, 'zotero-index');
    const paged = await call({ itemKey: '93WJRKG5', fromPage: 1, toPage: 2 });
    assert.equal(paged.structuredContent.source, 'webdav');
    assert.deepEqual(paged.structuredContent.pages, [1, 2]);
    assert.ok(paged.structuredContent.totalPages >= 3, `pages: ${paged.structuredContent.totalPages}`);
    assert.match(paged.structuredContent.text, /Geometric deep learning enables accurate protein structure/);
    assert.match(textOf(paged), /read: 1–2/);
  });

  it('cuts a long read at maxPages and says where to continue', async () => {
    const first = await call({ itemKey: '93WJRKG5', forceFile: true, maxPages: 1 });
    assert.equal(first.structuredContent.truncated, true);
    assert.match(textOf(first), /fromPage: 2/);
  });

  it('reports the outline and the file facts, with whether the file is on WebDAV', async () => {
    const outline = await call({ itemKey: 'UN79YVS8', mode: 'outline' });
    assert.deepEqual(outline.structuredContent.outline, []);
    const info = await call({ itemKey: 'UN79YVS8', mode: 'info' });
    assert.equal(info.structuredContent.file.onWebDav, true);
    assert.equal(info.structuredContent.file.parentItem, 'KPDKK5UT');
  });

  it('refuses to write the index back on a read-only connection', async () => {
    const result = await client.callTool(
      { name: 'zotero_read_attachment', arguments: { itemKey: 'UN79YVS8', writeBackIndex: true } },
      { timeout: REQUEST_TIMEOUT_MS },
    );
    assert.equal(result.isError, true);
    assert.match(textOf(result), /zotero:write/);
  });
});

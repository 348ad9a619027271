// Attachment files end to end: the server (Worker under wrangler dev, or native) reads the demo library's files
// from a real WebDAV server — Apache httpd with mod_dav on loopback, filled by zotero-sim-files in Zotero's
// layout (scripts/e2e.sh) — through the PDF engine, with the official client in the 2026-07-28 era. With
// E2E_FILE_STORE=zotero (scripts/e2e.sh's second pass) the same suite runs against servers set to
// FILE_STORAGE=zotero and a simulator serving the same files from its Zotero Storage origin, on its own port,
// which refuses any request carrying the API key.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import {
  MODERN_VERSION,
  READ_SCOPES,
  REQUEST_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  WRITE_SCOPES,
  authHeaders,
  connectValidating,
  mcpUrl,
  textOf,
} from './helpers.mjs';

const ZOTERO = process.env.E2E_FILE_STORE === 'zotero';
const STORE = ZOTERO
  ? { name: 'Zotero Storage (the simulator\'s storage origin)', check: 'zotero_storage', source: 'zotero-storage', storedIn: 'Zotero Storage' }
  : { name: 'WebDAV (Apache mod_dav)', check: 'webdav', source: 'webdav', storedIn: 'WebDAV' };

describe(`attachment files from ${STORE.name}`, { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let client;
  const call = async (args) => {
    const result = await client.callTool({ name: 'zotero_read_attachment', arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
    assert.ok(!result.isError, `zotero_read_attachment failed: ${textOf(result)}`);
    return result;
  };

  before(async () => {
    client = new Client({ name: 'zotero-mcp-e2e-attachments', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(READ_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
  });

  it('reports the file store as answering on /health (WebDAV\'s PROPFIND must go out as a PROPFIND)', async () => {
    const health = await (await fetch(new URL('/health', mcpUrl()))).json();
    const files = health.checks.find((check) => check.name === STORE.check);
    assert.equal(files?.ok, true, JSON.stringify(health));
  });

  it('reads a whole paper from Zotero\'s index and pages of it from the stored PDF', async () => {
    const indexed = await call({ itemKey: 'T6W7H8UE' });
    assert.equal(indexed.structuredContent.attachmentKey, '93WJRKG5');
    assert.equal(indexed.structuredContent.source, 'zotero-index');
    const paged = await call({ itemKey: '93WJRKG5', fromPage: 1, toPage: 2 });
    assert.equal(paged.structuredContent.source, STORE.source);
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

  it('reports the outline and the file facts, with whether the store has the file', async () => {
    const outline = await call({ itemKey: 'UN79YVS8', mode: 'outline' });
    assert.deepEqual(outline.structuredContent.outline, []);
    const info = await call({ itemKey: 'UN79YVS8', mode: 'info' });
    assert.equal(info.structuredContent.file.onWebDav, true);
    assert.equal(info.structuredContent.file.storedIn, STORE.storedIn);
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

// Writing: a PDF from the demo files (crates/sim/demo/files, freely licensed) is served over http on loopback
// by this test, downloaded by the server (sourceUrl; ALLOW_LOOPBACK_SOURCE_URLS=1 in tests/e2e/wrangler.test.toml),
// stored on Apache in Zotero's layout (or uploaded to the simulator's Zotero Storage), read back, highlighted,
// renamed and deleted. Both servers run this file against the same simulator, so each run works on the
// attachment it created.
describe(`attachment files written to ${STORE.name}`, { timeout: TEST_TIMEOUT_MS * 6 }, () => {
  const PARENT = 'KPDKK5UT';
  let client;
  let server;
  let fileUrl;
  let pdf;
  let attachmentKey;
  const tool = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS * 3 });
  const ok = async (name, args) => {
    const result = await tool(name, args);
    assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
    return result;
  };

  before(async () => {
    const dir = fileURLToPath(new URL('../../crates/sim/demo/files/', import.meta.url));
    // The apa7 sample (LPPL, crates/sim/demo/files/LICENSES.md): two pages, plain prose on page 1.
    pdf = readFileSync(path.join(dir, 'shortsample.pdf'));
    server = createServer((req, res) => {
      if (req.url === '/papers/demo%20paper.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length });
        res.end(pdf);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    fileUrl = `http://127.0.0.1:${server.address().port}/papers/demo%20paper.pdf`;
    client = new Client({ name: 'zotero-mcp-e2e-attachment-writes', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    const headers = await authHeaders(WRITE_SCOPES);
    await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  });

  after(async () => {
    await client?.close();
    server?.close();
  });

  it('downloads a PDF from a URL and stores it as a new attachment', async () => {
    const put = await ok('zotero_put_attachment', { parentItemKey: PARENT, sourceUrl: fileUrl });
    const out = put.structuredContent;
    attachmentKey = out.attachmentKey;
    assert.match(attachmentKey, /^[A-Z0-9]{8}$/);
    assert.equal(out.filename, 'demo paper.pdf');
    assert.equal(out.bytes, pdf.length);
    assert.equal(out.md5, createHash('md5').update(pdf).digest('hex'));
    assert.equal(out.recorded, true);
    assert.equal(out.storedIn, STORE.storedIn);
    const info = await ok('zotero_read_attachment', { itemKey: attachmentKey, mode: 'info' });
    assert.equal(info.structuredContent.file.onWebDav, true);
    assert.equal(info.structuredContent.file.md5, out.md5);
    assert.equal(info.structuredContent.file.parentItem, PARENT);
  });

  it('reads it back by pages, outline and info, then highlights a quoted sentence', async () => {
    assert.ok(attachmentKey, 'the upload step ran');
    const page = await ok('zotero_read_attachment', { itemKey: attachmentKey, fromPage: 1, toPage: 1 });
    assert.equal(page.structuredContent.source, STORE.source);
    assert.deepEqual(page.structuredContent.pages, [1]);
    await ok('zotero_read_attachment', { itemKey: attachmentKey, mode: 'outline' });
    // Six words in a row from the page's own text, as a model would quote them.
    const words = page.structuredContent.text.split(/\s+/).filter((w) => /^[A-Za-z][a-z]{2,}[,.]?$/.test(w));
    assert.ok(words.length >= 6, `page 1 has too few words: ${page.structuredContent.text.slice(0, 200)}`);
    const runs = page.structuredContent.text.split('\n').map((l) => l.trim()).filter((l) => l.split(/\s+/).length >= 6);
    const quote = runs[0].split(/\s+/).slice(0, 6).join(' ');
    const created = await ok('zotero_annotations', { action: 'create', itemKey: attachmentKey, page: 1, text: quote, comment: 'e2e' });
    const annotation = created.structuredContent.created;
    assert.equal(annotation.page, 1);
    assert.equal(annotation.attachmentKey, attachmentKey);
    assert.equal(annotation.text.replace(/\s+/g, ' ').toLowerCase(), quote.replace(/\s+/g, ' ').toLowerCase());
    const listed = await ok('zotero_annotations', { itemKey: attachmentKey });
    const found = listed.structuredContent.annotations.find((a) => a.key === annotation.annotationKey);
    assert.equal(found?.type, 'highlight');
    assert.equal(found?.comment, 'e2e');
  });

  it('renames the file after its parent: a dry run first, then applied', async () => {
    assert.ok(attachmentKey, 'the upload step ran');
    const template = '{{ firstCreator suffix=" - " }}{{ year }}';
    const dry = await ok('zotero_rename_attachments', { itemKeys: [attachmentKey], template });
    assert.deepEqual(dry.structuredContent.planned, [
      { attachmentKey, from: 'demo paper.pdf', to: 'Marchetti et al. - 2022.pdf', status: 'planned' },
    ]);
    const applied = await ok('zotero_rename_attachments', { itemKeys: [attachmentKey], template, apply: true });
    assert.equal(applied.structuredContent.planned[0].status, 'renamed', textOf(applied));
    const info = await ok('zotero_read_attachment', { itemKey: attachmentKey, mode: 'info' });
    assert.equal(info.structuredContent.file.filename, 'Marchetti et al. - 2022.pdf');
    const text = await ok('zotero_read_attachment', { itemKey: attachmentKey, fromPage: 1, toPage: 1 });
    assert.ok(text.structuredContent.text.length > 0, 'the renamed archive still reads');
  });

  it('replaces the file with one sent as base64, keeping its name', async () => {
    assert.ok(attachmentKey, 'the upload step ran');
    const replaced = await ok('zotero_put_attachment', { replaceAttachmentKey: attachmentKey, base64Data: pdf.toString('base64') });
    assert.equal(replaced.structuredContent.replaced, true);
    assert.equal(replaced.structuredContent.filename, 'Marchetti et al. - 2022.pdf');
    assert.equal(replaced.structuredContent.contentType, 'application/pdf');
    const info = await ok('zotero_read_attachment', { itemKey: attachmentKey, mode: 'info' });
    assert.equal(info.structuredContent.file.md5, replaced.structuredContent.md5);
  });

  it('refuses a URL on a private address and writes nothing', async () => {
    const result = await tool('zotero_put_attachment', { parentItemKey: PARENT, sourceUrl: 'https://10.0.0.1/paper.pdf' });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /Nothing was written/);
  });

  it('deletes it for good, files included', async () => {
    assert.ok(attachmentKey, 'the upload step ran');
    const deleted = await ok('zotero_delete_attachment', { attachmentKey, permanent: true });
    assert.equal(deleted.structuredContent.filesRemoved, true, textOf(deleted));
    const gone = await tool('zotero_read_attachment', { itemKey: attachmentKey, mode: 'info' });
    assert.equal(gone.isError, true);
  });
});

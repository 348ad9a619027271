// `zotero-mcp serve --stdio --local` on Zotero Desktop, driven by the official client's stdio transport
// (@modelcontextprotocol/client 2.4.0). "Zotero Desktop" is zotero-sim in its local-API mode (docs/simulator.md):
// one imitating Zotero 10 (writes on the local API, behind its authorization dialog), one Zotero 7 (read-only),
// each with a data directory laid out as Zotero's (storage/<KEY>/<file>, a linked file outside it). scripts/e2e.sh
// starts them and sets ZOTERO_MCP_BIN, LOCAL10_URL/LOCAL10_DATA, LOCAL7_URL/LOCAL7_DATA, LOCAL_OFF_URL (a
// Zotero whose local API is switched off) and SIM_URL (the Web API, for writes routed there).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { connectValidating } from '../helpers.mjs';

const BIN = process.env.ZOTERO_MCP_BIN;
const TIMEOUT = 30_000;
const stateDir = mkdtempSync(join(tmpdir(), 'zotero-mcp-desktop-'));
after(() => rmSync(stateDir, { recursive: true, force: true }));

/** The real 5-page PDF of the demo library (elstest-5p.pdf) and its parent. */
const PDF = 'A6JVMAK4';
const PDF_PARENT = '6FEP7ILJ';
/** The linked file the simulator's data directory adds outside storage/ (docs/simulator.md). */
const LINKED = process.env.LOCAL_LINKED_KEY;
const LINKED_PHRASE = process.env.LOCAL_LINKED_PHRASE;

async function connect({ url, data, modern = true, env = {} }) {
  assert.ok(BIN && url, 'run through scripts/e2e.sh (ZOTERO_MCP_BIN and the LOCAL*_URL variables)');
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['serve', '--stdio', '--local'],
    env: {
      PATH: process.env.PATH ?? '',
      ZOTERO_LOCAL_URL: `${url}/api`,
      ...(data ? { ZOTERO_DATA_DIR: data } : {}),
      ZOTERO_MCP_DATA_DIR: stateDir,
      // No HOME: the data directory is the one given, never the machine's own Zotero.
      HOME: stateDir,
      ...env,
    },
    stderr: 'pipe',
  });
  const options = modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
  const client = new Client({ name: 'zotero-mcp-e2e-desktop', version: '1.0.0' }, options);
  return connectValidating(client, transport, { timeout: TIMEOUT });
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args }, { timeout: TIMEOUT });
}

async function ok(client, name, args) {
  const result = await call(client, name, args);
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** A one-page PDF whose page says `line` (Helvetica, uncompressed). */
function makePdf(line) {
  const stream = `BT /F1 12 Tf 72 720 Td (${line}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const text = (result) => (result.content ?? []).map((c) => c.text ?? '').join('\n');

async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

for (const modern of [false, true]) {
  const era = modern ? '2026-07-28' : 'legacy (initialize)';
  describe(`Zotero 10 on this machine (--local), ${era}`, { timeout: TIMEOUT * 8 }, () => {
    test('searches the library through the local API', async () => {
      const client = await connect({ url: process.env.LOCAL10_URL, data: process.env.LOCAL10_DATA, modern });
      try {
        const found = await ok(client, 'zotero_search', { query: '宋代', limit: 3 });
        assert.ok(found.items.length >= 1, 'found the Chinese demo item');
        const item = await ok(client, 'zotero_get_item', { key: found.items[0].key });
        assert.equal(item.item.key, found.items[0].key);
      } finally {
        await client.close();
      }
    });
  });
}

describe('Zotero 10 on this machine: files from disk, writes through the local API', { timeout: TIMEOUT * 10 }, () => {
  test('reads a PDF by pages from the data directory, highlights it, and writes a note', async () => {
    const client = await connect({ url: process.env.LOCAL10_URL, data: process.env.LOCAL10_DATA });
    try {
      // Every page (elstest-5p is the elsarticle "5p" layout: 4 pages), over as many calls as the answer's budget
      // takes (a cut read stops at a page boundary and the next call goes on from there).
      const pages = [];
      let all = '';
      let total = Infinity;
      for (let from = 1, calls = 0; from <= total && calls < 5; calls += 1) {
        const read = await ok(client, 'zotero_read_attachment', { itemKey: PDF, fromPage: from, toPage: 5 });
        assert.equal(read.source, 'zotero-desktop');
        total = read.totalPages;
        assert.ok(read.pages.length > 0 && read.pages[0] === from, JSON.stringify(read.pages));
        pages.push(...read.pages);
        all += read.text;
        from = read.pages.at(-1) + 1;
      }
      assert.equal(total, 4);
      assert.deepEqual(pages, [1, 2, 3, 4]);
      const runs = all.split('\n').map((l) => l.trim()).filter((l) => l.split(/\s+/).length >= 6);
      assert.ok(runs.length > 0, `no line of six words in the paper: ${all.slice(0, 200)}`);
      const first = await ok(client, 'zotero_read_attachment', { itemKey: PDF, fromPage: 1, toPage: 1 });
      const line = first.text.split('\n').map((l) => l.trim()).find((l) => l.split(/\s+/).length >= 6);
      const quote = line.split(/\s+/).slice(0, 6).join(' ');
      const created = await ok(client, 'zotero_annotations', { action: 'create', itemKey: PDF, page: 1, text: quote, comment: 'desktop e2e' });
      assert.equal(created.created.page, 1);
      const listed = await ok(client, 'zotero_annotations', { itemKey: PDF });
      const found = listed.annotations.find((a) => a.key === created.created.annotationKey);
      assert.equal(found?.comment, 'desktop e2e', 'the highlight is read back (annotations asked for by type)');

      const title = `Desktop note ${Date.now()}`;
      const note = await ok(client, 'zotero_notes', { action: 'create', itemKey: PDF_PARENT, title, note: 'Written **locally**.' });
      const notes = await ok(client, 'zotero_notes', { action: 'list', itemKey: PDF_PARENT });
      assert.ok(notes.notes.some((n) => n.key === note.noteKey || n.key === note.key), JSON.stringify(notes.notes.map((n) => n.key)));
    } finally {
      await client.close();
    }
  });

  test('reads a linked file from where the person keeps it', async () => {
    assert.ok(LINKED && LINKED_PHRASE, 'scripts/e2e.sh sets LOCAL_LINKED_KEY and LOCAL_LINKED_PHRASE');
    const client = await connect({ url: process.env.LOCAL10_URL, data: process.env.LOCAL10_DATA });
    try {
      const read = await ok(client, 'zotero_read_attachment', { itemKey: LINKED, fromPage: 2, toPage: 2 });
      assert.equal(read.source, 'zotero-desktop');
      assert.ok(read.text.includes(LINKED_PHRASE), read.text.slice(0, 300));
    } finally {
      await client.close();
    }
  });

  test('stores a new file through the local API, where Zotero keeps it, and reads it back from disk', async () => {
    const client = await connect({ url: process.env.LOCAL10_URL, data: process.env.LOCAL10_DATA });
    try {
      const phrase = `Desktop upload ${Date.now()}`;
      const pdf = makePdf(phrase);
      const put = await ok(client, 'zotero_put_attachment', { parentItemKey: PDF_PARENT, base64Data: pdf.toString('base64'), filename: 'desktop-upload.pdf' });
      const key = put.attachmentKey;
      assert.ok(key, JSON.stringify(put));
      const onDisk = join(process.env.LOCAL10_DATA, 'storage', key, 'desktop-upload.pdf');
      assert.deepEqual(readFileSync(onDisk), pdf, 'the file is in storage/<KEY>/ of the data directory');
      const read = await ok(client, 'zotero_read_attachment', { itemKey: key });
      assert.equal(read.source, 'zotero-desktop');
      assert.ok(read.text.includes(phrase), read.text.slice(0, 200));

      const renamed = await ok(client, 'zotero_rename_attachments', { itemKeys: [key], apply: true, template: 'renamed by the test' });
      const planned = renamed.planned.find((p) => p.attachmentKey === key);
      assert.match(planned?.status ?? '', /^failed: .*Rename File from Parent Metadata/, JSON.stringify(renamed.planned));
      assert.ok(existsSync(onDisk), 'a rename through the local API never leaves the item without its file');
    } finally {
      await client.close();
    }
  });
});

describe('Zotero 7 on this machine: read-only', { timeout: TIMEOUT * 6 }, () => {
  test('reads, and refuses a write with what to configure, changing nothing', async () => {
    const client = await connect({ url: process.env.LOCAL7_URL, data: process.env.LOCAL7_DATA });
    try {
      const found = await ok(client, 'zotero_search', { query: '宋代', limit: 3 });
      assert.ok(found.items.length >= 1);
      const read = await ok(client, 'zotero_read_attachment', { itemKey: PDF, fromPage: 1, toPage: 1 });
      assert.equal(read.source, 'zotero-desktop');
      const title = `Zotero 7 must not take this ${Date.now()}`;
      const refused = await call(client, 'zotero_notes', { action: 'create', itemKey: PDF_PARENT, title, note: 'no' });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /Zotero 7\.\S* takes no writes on its local API/);
      assert.match(text(refused), /ZOTERO_API_KEY/);
      const notes = await ok(client, 'zotero_notes', { action: 'list', itemKey: PDF_PARENT });
      assert.ok(!notes.notes.some((n) => (n.text ?? '').includes(title)));
    } finally {
      await client.close();
    }
  });

  test('with a Web API key, a write goes through the Web API instead', async () => {
    assert.ok(process.env.SIM_URL, 'SIM_URL');
    const client = await connect({
      url: process.env.LOCAL7_URL,
      data: process.env.LOCAL7_DATA,
      env: { ZOTERO_API_BASE: process.env.SIM_URL, ZOTERO_API_KEY: 'demo', ZOTERO_LIBRARY_ID: '1234567' },
    });
    try {
      const title = `Through the Web API ${Date.now()}`;
      await ok(client, 'zotero_create_items', { items: [{ itemType: 'book', title }] });
      const web = await fetch(`${process.env.SIM_URL}/users/1234567/items?q=${encodeURIComponent(title)}`, {
        headers: { 'Zotero-API-Key': 'demo' },
        signal: AbortSignal.timeout(TIMEOUT),
      });
      const items = await web.json();
      assert.equal(items.length, 1, 'the book is in the Web API library');
      const local = await ok(client, 'zotero_search', { query: title });
      assert.equal(local.items.length, 0, 'reads stay on the desktop, which sees it once Zotero syncs');
    } finally {
      await client.close();
    }
  });
});

describe('what the server says on start', { timeout: TIMEOUT * 2 }, () => {
  const start = (url, data, env = {}) => {
    const run = spawnSync(BIN, ['serve', '--stdio', '--local'], {
      input: '',
      timeout: TIMEOUT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ZOTERO_LOCAL_URL: `${url}/api`, ZOTERO_DATA_DIR: data, ZOTERO_MCP_DATA_DIR: stateDir, HOME: stateDir, ...env },
    });
    return run.stderr;
  };

  test('which Zotero it found, whether it writes, and where the files are read from', () => {
    const ten = start(process.env.LOCAL10_URL, process.env.LOCAL10_DATA);
    assert.match(ten, /Zotero 10\.0\.2; writes through its local API; files from .*zotero10 \(ZOTERO_DATA_DIR\)/);
    const seven = start(process.env.LOCAL7_URL, process.env.LOCAL7_DATA, { ZOTERO_API_KEY: '' });
    assert.match(seven, /Zotero 7\.0\.15, read-only \(set ZOTERO_API_KEY to write through the Web API\)/);
    const elsewhere = start(process.env.LOCAL10_URL, stateDir);
    assert.match(elsewhere, /holds no zotero\.sqlite, so it is not Zotero's data directory/);
  });
});

describe('no Zotero to talk to', { timeout: TIMEOUT * 4 }, () => {
  test('Zotero not running: every call says to start it', async () => {
    const client = await connect({ url: `http://127.0.0.1:${await closedPort()}` });
    try {
      const refused = await call(client, 'zotero_search', { query: 'anything' });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /Zotero Desktop does not answer/);
      assert.match(text(refused), /Start Zotero/);
    } finally {
      await client.close();
    }
  });

  test('local API switched off: the call says where to switch it on', async () => {
    const client = await connect({ url: process.env.LOCAL_OFF_URL });
    try {
      const refused = await call(client, 'zotero_search', { query: 'anything' });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /local API is switched off/);
      assert.match(text(refused), /Allow other applications on this computer to communicate with Zotero/);
    } finally {
      await client.close();
    }
  });
});

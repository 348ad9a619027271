// The native `zotero-mcp serve --stdio` driven by the official client's stdio transport
// (@modelcontextprotocol/client 2.4.0), in both eras: the default legacy mode (initialize handshake) and
// pinned to 2026-07-28 (server/discover, then the _meta envelope on every request). The server's Zotero is
// zotero-sim with the demo library; scripts/e2e.sh starts it and sets ZOTERO_MCP_BIN and SIM_URL.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { connectValidating } from '../helpers.mjs';

const BIN = process.env.ZOTERO_MCP_BIN;
const SIM_URL = process.env.SIM_URL;
const TIMEOUT = 30_000;
const dataDir = mkdtempSync(join(tmpdir(), 'zotero-mcp-stdio-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

async function connect({ modern, readOnly = false }) {
  assert.ok(BIN && SIM_URL, 'run through scripts/e2e.sh (ZOTERO_MCP_BIN and SIM_URL)');
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['serve', '--stdio', ...(readOnly ? ['--read-only'] : [])],
    env: {
      PATH: process.env.PATH ?? '',
      ZOTERO_API_BASE: SIM_URL,
      ZOTERO_API_KEY: 'demo',
      ZOTERO_LIBRARY_ID: '1234567',
      ZOTERO_MCP_DATA_DIR: dataDir,
      ENABLE_TEST_FIXTURES: '1',
    },
    stderr: 'pipe',
  });
  const options = modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
  const client = new Client({ name: 'zotero-mcp-e2e-stdio', version: '1.0.0' }, options);
  // Lists the tools too, so every callTool answer is checked against its outputSchema.
  return connectValidating(client, transport, { timeout: TIMEOUT });
}

for (const modern of [false, true]) {
  const era = modern ? '2026-07-28 (pinned)' : 'legacy (initialize)';
  describe(`stdio server, @modelcontextprotocol/client 2.4.0, ${era}`, { timeout: TIMEOUT * 6 }, () => {
    test('connects in its era and lists the library tools', async () => {
      const client = await connect({ modern });
      try {
        assert.equal(client.getProtocolEra(), modern ? 'modern' : 'legacy');
        assert.equal(client.getServerVersion()?.name, 'zotero-mcp');
        const { tools } = await client.listTools(undefined, { timeout: TIMEOUT });
        const names = tools.map((t) => t.name);
        for (const name of ['zotero_search', 'zotero_get_item', 'zotero_create_items', 'zotero_notes']) {
          assert.ok(names.includes(name), `${name} listed`);
        }
      } finally {
        await client.close();
      }
    });

    test('searches the demo library and reads an item', async () => {
      const client = await connect({ modern });
      try {
        const found = await client.callTool({ name: 'zotero_search', arguments: { query: '宋代', limit: 3 } }, { timeout: TIMEOUT });
        assert.notEqual(found.isError, true, JSON.stringify(found));
        const items = found.structuredContent.items;
        assert.ok(items.length >= 1, 'found the Chinese demo item');
        const item = await client.callTool({ name: 'zotero_get_item', arguments: { key: items[0].key } }, { timeout: TIMEOUT });
        assert.notEqual(item.isError, true, JSON.stringify(item));
        assert.equal(item.structuredContent.item.key, items[0].key);
      } finally {
        await client.close();
      }
    });

    test('a read-only server refuses writes and changes nothing', async () => {
      const client = await connect({ modern, readOnly: true });
      try {
        const refused = await client.callTool(
          { name: 'zotero_create_items', arguments: { items: [{ itemType: 'book', title: 'Should not exist' }] } },
          { timeout: TIMEOUT },
        );
        assert.equal(refused.isError, true);
        assert.match(refused.content[0].text, /read-only/);
        const search = await client.callTool({ name: 'zotero_search', arguments: { query: 'Should not exist' } }, { timeout: TIMEOUT });
        assert.equal(search.structuredContent.items.length, 0);
      } finally {
        await client.close();
      }
    });
  });
}

test('a write through the stdio server reaches the library', { timeout: TIMEOUT * 2 }, async () => {
  const client = await connect({ modern: true });
  try {
    const title = `stdio write ${Date.now()}`;
    const created = await client.callTool(
      { name: 'zotero_create_items', arguments: { items: [{ itemType: 'book', title }] } },
      { timeout: TIMEOUT },
    );
    assert.notEqual(created.isError, true, JSON.stringify(created));
    const search = await client.callTool({ name: 'zotero_search', arguments: { query: title } }, { timeout: TIMEOUT });
    assert.equal(search.structuredContent.items.length, 1, JSON.stringify(search.structuredContent));
  } finally {
    await client.close();
  }
});

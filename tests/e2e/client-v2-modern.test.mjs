// @modelcontextprotocol/client 2.4.0 pinned to the 2026-07-28 era.
//
// Era selection (read from the package's client .d.mts / versionNegotiation source):
//   new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
// connect() then probes with `server/discover` (params._meta envelope, MCP-Protocol-Version and
// Mcp-Method headers); the discover result must list 2026-07-28 in supportedVersions, or connect
// fails (no fallback in pin mode). Every later request carries the `_meta` envelope plus the
// MCP-Protocol-Version / Mcp-Method / Mcp-Name headers.

import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { defineClientSuite } from './client-suite.mjs';
import { MODERN_VERSION, REQUEST_TIMEOUT_MS, SERVER_NAME, connectValidating, mcpUrl } from './helpers.mjs';

defineClientSuite({
  label: '@modelcontextprotocol/client 2.4.0, pinned 2026-07-28',
  modern: true,
  async connect({ headers }) {
    const client = new Client(
      { name: 'zotero-mcp-e2e-v2-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN_VERSION } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } });
    // Lists the tools too, so every callTool answer is checked against its outputSchema.
    await connectValidating(client, transport);
    return {
      client,
      callTool: (params) => client.callTool(params, { timeout: REQUEST_TIMEOUT_MS }),
      close: () => client.close(),
    };
  },
  assertConnected({ client }) {
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN_VERSION);
    const discover = client.getDiscoverResult();
    assert.ok(discover, 'connect kept the server/discover result');
    assert.ok(discover.supportedVersions.includes(MODERN_VERSION));
    assert.equal(discover.resultType, 'complete');
    assert.equal(discover._meta?.['io.modelcontextprotocol/serverInfo']?.name, SERVER_NAME);
    assert.ok(Number.isInteger(discover.ttlMs) && discover.ttlMs >= 0, 'discover carries ttlMs');
    assert.ok(['public', 'private'].includes(discover.cacheScope), 'discover carries cacheScope');
  },
});

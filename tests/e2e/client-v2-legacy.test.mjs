// @modelcontextprotocol/client 2.4.0 in its default legacy mode.
//
// Era selection: no `versionNegotiation` option (equivalently `{ mode: 'legacy' }`) runs the plain
// 2025 sequence: `initialize` offering 2025-11-25, then `notifications/initialized`, then a GET for
// the standalone SSE stream (the Worker answers 405, which the transport accepts). No `_meta`
// envelope and no Mcp-* headers; MCP-Protocol-Version: 2025-11-25 after initialize.

import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { defineClientSuite } from './client-suite.mjs';
import { LATEST_LEGACY_VERSION, REQUEST_TIMEOUT_MS, connectValidating, mcpUrl } from './helpers.mjs';

defineClientSuite({
  label: '@modelcontextprotocol/client 2.4.0, legacy (default) mode',
  async connect({ headers }) {
    const client = new Client({ name: 'zotero-mcp-e2e-v2-legacy', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } });
    // Lists the tools too, so every callTool answer is checked against its outputSchema.
    await connectValidating(client, transport);
    return {
      client,
      transport,
      callTool: (params) => client.callTool(params, { timeout: REQUEST_TIMEOUT_MS }),
      close: () => client.close(),
    };
  },
  assertConnected({ client, transport }) {
    assert.equal(client.getProtocolEra(), 'legacy');
    assert.equal(client.getNegotiatedProtocolVersion(), LATEST_LEGACY_VERSION);
    assert.equal(client.getDiscoverResult(), undefined);
    assert.equal(transport.sessionId, undefined, 'stateless: no Mcp-Session-Id minted');
  },
});

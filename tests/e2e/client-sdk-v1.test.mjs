// @modelcontextprotocol/sdk 1.32.2: the legacy-only client most deployed hosts still embed.
// It always runs `initialize` with protocolVersion 2025-11-25 (its LATEST_PROTOCOL_VERSION), then
// `notifications/initialized`, then a GET for the standalone SSE stream (405 is accepted).

import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { defineClientSuite } from './client-suite.mjs';
import { LATEST_LEGACY_VERSION, REQUEST_TIMEOUT_MS, connectValidating, mcpUrl } from './helpers.mjs';

defineClientSuite({
  label: '@modelcontextprotocol/sdk 1.32.2 (legacy)',
  async connect({ headers }) {
    const client = new Client({ name: 'zotero-mcp-e2e-sdk-v1', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } });
    // Lists the tools too, so every callTool answer is checked against its outputSchema.
    await connectValidating(client, transport);
    return {
      client,
      transport,
      // v1 signature: callTool(params, resultSchema?, options?)
      callTool: (params) => client.callTool(params, undefined, { timeout: REQUEST_TIMEOUT_MS }),
      close: () => client.close(),
    };
  },
  assertConnected({ transport }) {
    assert.equal(transport.protocolVersion, LATEST_LEGACY_VERSION);
    assert.equal(transport.sessionId, undefined, 'stateless: no Mcp-Session-Id minted');
  },
});

// The output-schema checks of the other tests, checked themselves: a stand-in MCP server on loopback (raw
// node:http JSON-RPC, started and stopped here) publishes a tool whose outputSchema requires fields its
// answers leave out or get wrong, and each mechanism must refuse those answers — the raw HTTP helper
// (postMcp → assertToolCallAnswer) and both official SDK clients once connectValidating has listed the
// tools. Our own server never has to be wrong for this to run, and MCP_URL is not used (scripts/e2e.sh
// runs this file against every target anyway; it costs well under a second).

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

import { connectValidating, legacyRequest, postMcp } from './helpers.mjs';

const TIMEOUT_MS = 2_000;

const TOOL = {
  name: 'fixture_count',
  description: 'Answers as `mode` says: right, wrong (a required field missing, a nested one mistyped), missing (no structuredContent), error.',
  inputSchema: { type: 'object', properties: { mode: { type: 'string' } }, required: ['mode'] },
  outputSchema: {
    type: 'object',
    properties: {
      count: { type: 'integer' },
      items: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } },
    },
    required: ['count', 'items'],
  },
};

const ANSWERS = {
  right: { content: [{ type: 'text', text: 'one' }], structuredContent: { count: 1, items: [{ key: 'A' }] } },
  wrong: { content: [{ type: 'text', text: 'no count' }], structuredContent: { items: [{ key: 7 }] } },
  missing: { content: [{ type: 'text', text: 'text only' }] },
  error: { content: [{ type: 'text', text: 'failed' }], isError: true },
};

/** The stand-in's JSON-RPC answers: just enough of the 2025 era for both SDK clients to connect. */
function answer(message) {
  switch (message.method) {
    case 'initialize':
      return {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'output-schema-standin', version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: [TOOL] };
    case 'tools/call':
      return ANSWERS[message.params?.arguments?.mode];
    default:
      return undefined;
  }
}

describe('tool answers are checked against their outputSchema', { timeout: TIMEOUT_MS * 5 }, () => {
  let server;
  let url;
  const methods = [];

  before(async () => {
    server = createServer((req, res) => {
      if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const message = JSON.parse(text);
        methods.push(message.method);
        if (message.id === undefined) return res.writeHead(202).end();
        const result = answer(message);
        const reply = result
          ? { jsonrpc: '2.0', id: message.id, result }
          : { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no ${message.method} here` } };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${server.address().port}/mcp`;
  });

  after(() => {
    server?.closeAllConnections();
    server?.close();
  });

  /** A tools/call through postMcp with no Authorization (`null`: the stand-in wants no token). */
  const rawCall = (mode) => {
    const req = legacyRequest('tools/call', { name: TOOL.name, arguments: { mode } });
    return postMcp({ ...req, headers: { ...req.headers, authorization: null } }, { url });
  };

  test('the raw helper fails a mismatch with the tool, the failing paths and the arguments', { timeout: TIMEOUT_MS }, async () => {
    const listsBefore = methods.filter((m) => m === 'tools/list').length;
    await assert.rejects(rawCall('wrong'), (error) => {
      assert.ok(error instanceof assert.AssertionError, String(error));
      assert.equal(
        error.message,
        "fixture_count answer does not match its outputSchema: / must have required property 'count'; " +
          '/items/0/key must be string; arguments: {"mode":"wrong"}',
      );
      return true;
    });
    await assert.rejects(rawCall('missing'), {
      name: 'AssertionError',
      message: 'fixture_count has an outputSchema but its answer has no structuredContent; arguments: {"mode":"missing"}',
    });
    const right = await rawCall('right');
    assert.deepEqual(right.json.result.structuredContent, ANSWERS.right.structuredContent);
    const failed = await rawCall('error');
    assert.equal(failed.json.result.isError, true, 'a tool error is not held to the schema');
    assert.equal(methods.filter((m) => m === 'tools/list').length, listsBefore + 1, 'the catalogue is fetched once per URL');
  });

  const clients = [
    ['@modelcontextprotocol/sdk 1.x', () => new ClientV1({ name: 'output-validation-v1', version: '1.0.0' }), TransportV1],
    ['@modelcontextprotocol/client 2.x', () => new ClientV2({ name: 'output-validation-v2', version: '1.0.0' }), TransportV2],
  ];
  // v1's callTool is (params, resultSchema?, options?), v2's (params, options?); both default the schema.
  const options = { timeout: TIMEOUT_MS };
  const call = (client, mode) =>
    client instanceof ClientV1
      ? client.callTool({ name: TOOL.name, arguments: { mode } }, undefined, options)
      : client.callTool({ name: TOOL.name, arguments: { mode } }, options);

  for (const [label, make, Transport] of clients) {
    test(`${label}: after connectValidating the client itself refuses a mismatch`, { timeout: TIMEOUT_MS }, async () => {
      const client = make();
      await connectValidating(client, new Transport(new URL(url)), { timeout: TIMEOUT_MS });
      try {
        await assert.rejects(call(client, 'wrong'), (error) => {
          // The SDK's own rejection (InvalidParams), with the tool and the arguments added by the wrapper.
          assert.equal(error.code, -32602, String(error));
          assert.match(error.message, /^fixture_count: .*Structured content does not match the tool's output schema: /);
          assert.match(error.message, /data must have required property 'count'/);
          assert.match(error.message, /data\/items\/0\/key must be string/);
          assert.match(error.message, /; arguments: \{"mode":"wrong"\}$/);
          return true;
        });
        await assert.rejects(call(client, 'missing'), (error) => {
          assert.equal(error.code, -32600, String(error));
          assert.match(error.message, /has an output schema but did not return structured content; arguments: \{"mode":"missing"\}$/);
          return true;
        });
        assert.deepEqual((await call(client, 'right')).structuredContent, ANSWERS.right.structuredContent);
        assert.equal((await call(client, 'error')).isError, true);
      } finally {
        await client.close();
      }
    });

    test(`${label}: without a listing the client accepts the mismatch (why connectValidating lists)`, { timeout: TIMEOUT_MS }, async () => {
      const client = make();
      await client.connect(new Transport(new URL(url)), { timeout: TIMEOUT_MS });
      try {
        const result = await call(client, 'wrong');
        assert.deepEqual(result.structuredContent, ANSWERS.wrong.structuredContent);
      } finally {
        await client.close();
      }
    });
  }

  test('what an SDK client lets through, connectValidating still fails', { timeout: TIMEOUT_MS }, async () => {
    const client = new ClientV1({ name: 'output-validation-v1-emptied', version: '1.0.0' });
    await connectValidating(client, new TransportV1(new URL(url)), { timeout: TIMEOUT_MS });
    try {
      // v1 rebuilds its validators from each listing: an empty one leaves it nothing to check with.
      client.cacheToolMetadata([]);
      await assert.rejects(call(client, 'wrong'), {
        name: 'AssertionError',
        message:
          "fixture_count answer does not match its outputSchema: / must have required property 'count'; " +
          '/items/0/key must be string; arguments: {"mode":"wrong"} (the client accepted it)',
      });
    } finally {
      await client.close();
    }
  });
});

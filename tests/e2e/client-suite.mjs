// The walk-through every real MCP client does against the Worker's fixture registry
// (ENABLE_TEST_FIXTURES = "1"): connect, tools, resources, prompts. Each *.test.mjs file calls
// `defineClientSuite` with its own client and era; every test opens its own connection, so the
// tests are independent and can run in any order.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  READ_SCOPES,
  REQUEST_TIMEOUT_MS,
  SERVER_NAME,
  TEST_TIMEOUT_MS,
  WRITE_SCOPES,
  assertRejects,
  authHeaders,
  textOf,
} from './helpers.mjs';

const opts = { timeout: REQUEST_TIMEOUT_MS };

/**
 * @param {object} spec
 * @param {string} spec.label            suite title
 * @param {(opts: {headers: object}) => Promise<{client: any, close: () => Promise<void>, callTool: (params: object) => Promise<any>}>} spec.connect
 *   connect with these extra request headers (the bearer token; every request to /mcp needs one), through
 *   helpers.mjs's connectValidating, so the client checks every answer against the tool's outputSchema
 * @param {(handle: any) => void} spec.assertConnected  era-specific checks right after connect
 * @param {boolean} [spec.modern]        true for the 2026-07-28 era (enables era-only checks)
 */
export function defineClientSuite({ label, connect, assertConnected, modern = false }) {
  /** Connect with a token of these scopes (obtained through the OAuth flow), run `fn`, always close. */
  async function withClient(fn, scopes = READ_SCOPES) {
    const handle = await connect({ headers: await authHeaders(scopes) });
    try {
      return await fn(handle);
    } finally {
      await handle.close();
    }
  }

  describe(label, { timeout: TEST_TIMEOUT_MS * 12 }, () => {
    test('connects and identifies the server', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        const info = handle.client.getServerVersion();
        assert.ok(info, 'server identified itself');
        assert.equal(info.name, SERVER_NAME);
        assert.equal(typeof info.version, 'string');
        assert.ok(info.version.length > 0);
        const caps = handle.client.getServerCapabilities();
        assert.ok(caps?.tools, 'tools capability advertised');
        assert.ok(caps?.resources, 'resources capability advertised');
        assert.ok(caps?.prompts, 'prompts capability advertised');
        assertConnected(handle);
      }));

    test('lists the fixture tools with schemas and annotations', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async ({ client }) => {
        const { tools } = await client.listTools(undefined, opts);
        assert.ok(Array.isArray(tools));
        const echo = tools.find((t) => t.name === 'fixture_echo');
        const write = tools.find((t) => t.name === 'fixture_write');
        assert.ok(echo, `fixture_echo listed (got: ${tools.map((t) => t.name).join(', ')})`);
        assert.ok(write, 'fixture_write listed');

        for (const tool of [echo, write]) {
          assert.equal(typeof tool.description, 'string', `${tool.name} has a description`);
          assert.ok(tool.description.length > 0);
          assert.equal(tool.inputSchema?.type, 'object', `${tool.name} inputSchema is an object schema`);
          assert.equal(tool.outputSchema?.type, 'object', `${tool.name} outputSchema is an object schema`);
        }

        const ein = echo.inputSchema;
        assert.equal(ein.properties?.text?.type, 'string');
        assert.deepEqual(ein.required, ['text'], 'only `text` is required');
        assert.equal(ein.properties?.repeat?.type, 'integer');
        const eout = echo.outputSchema;
        assert.equal(eout.properties?.echoed?.type, 'string');
        assert.equal(eout.properties?.length?.type, 'integer');
        assert.ok(eout.required?.includes('echoed') && eout.required?.includes('length'));
        assert.equal(echo.annotations?.readOnlyHint, true, 'fixture_echo is read-only');

        assert.equal(write.inputSchema.properties?.note?.type, 'string');
        assert.equal(write.outputSchema.properties?.written?.type, 'boolean');
        assert.notEqual(write.annotations?.readOnlyHint, true, 'fixture_write is not read-only');
      }, WRITE_SCOPES));

    test('a read-only token is not shown the tools that only write', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async ({ client }) => {
        const names = (await client.listTools(undefined, opts)).tools.map((t) => t.name);
        assert.ok(names.includes('fixture_echo'), names.join(', '));
        assert.ok(!names.includes('fixture_write'), `fixture_write only writes: ${names.join(', ')}`);
        assert.ok(!names.includes('zotero_create_items') && names.includes('zotero_notes'), names.join(', '));
      }));

    test('fixture_echo returns structured content and a text block', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        const text = 'héllo wörld 😀';
        const result = await handle.callTool({ name: 'fixture_echo', arguments: { text, repeat: 2 } });
        assert.ok(!result.isError, `unexpected tool error: ${textOf(result)}`);
        const echoed = `${text} ${text}`;
        // `length` counts characters (Unicode scalar values), not bytes or UTF-16 units.
        assert.deepEqual(result.structuredContent, { echoed, length: [...echoed].length });
        assert.ok(
          result.content.some((b) => b.type === 'text' && b.text === `Echo: ${echoed}`),
          `text block "Echo: ${echoed}" (got: ${JSON.stringify(result.content)})`,
        );
      }));

    test('fixture_echo defaults repeat to 1', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        const result = await handle.callTool({ name: 'fixture_echo', arguments: { text: 'once' } });
        assert.ok(!result.isError, `unexpected tool error: ${textOf(result)}`);
        assert.deepEqual(result.structuredContent, { echoed: 'once', length: 4 });
      }));

    test('fixture_echo rejects a bad argument as a tool error naming it', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        const badRepeat = await handle.callTool({ name: 'fixture_echo', arguments: { text: 'hi', repeat: 9 } });
        assert.equal(badRepeat.isError, true, 'repeat=9 is outside 1..=5');
        assert.match(textOf(badRepeat), /repeat/, 'message names the argument');

        const missingText = await handle.callTool({ name: 'fixture_echo', arguments: {} });
        assert.equal(missingText.isError, true, 'text is required');
        assert.match(textOf(missingText), /text/, 'message names the argument');

        const emptyText = await handle.callTool({ name: 'fixture_echo', arguments: { text: '' } });
        assert.equal(emptyText.isError, true, 'text must have at least 1 character');
        assert.match(textOf(emptyText), /text/, 'message names the argument');
      }));

    test('fixture_write is refused without the zotero:write scope', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        const result = await handle.callTool({ name: 'fixture_write', arguments: { note: 'hello' } });
        assert.equal(result.isError, true, 'a read-only token cannot write');
        assert.match(textOf(result), /zotero:write/);
      }));

    test('fixture_write works with a zotero:write token', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        const result = await handle.callTool({ name: 'fixture_write', arguments: { note: 'hello' } });
        assert.ok(!result.isError, `unexpected tool error: ${textOf(result)}`);
        assert.deepEqual(result.structuredContent, { written: true });
      }, WRITE_SCOPES));

    test('an unknown tool is a JSON-RPC -32602 error', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async (handle) => {
        await assertRejects(handle.callTool({ name: 'no_such_fixture_tool', arguments: {} }), (error) => {
          assert.equal(error.code, -32602, `error code (${error.message})`);
        });
      }));

    test('lists and reads the static fixture resource', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async ({ client }) => {
        const { resources } = await client.listResources(undefined, opts);
        const hello = resources.find((r) => r.uri === 'fixture://hello');
        assert.ok(hello, `fixture://hello listed (got: ${resources.map((r) => r.uri).join(', ')})`);
        assert.equal(typeof hello.name, 'string');
        assert.equal(hello.mimeType, 'text/plain');

        const read = await client.readResource({ uri: 'fixture://hello' }, opts);
        assert.equal(read.contents.length, 1);
        assert.equal(read.contents[0].uri, 'fixture://hello');
        assert.equal(read.contents[0].mimeType, 'text/plain');
        assert.equal(read.contents[0].text, 'Hello from zotero-mcp fixtures');
      }));

    test('lists and reads the fixture resource template', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async ({ client }) => {
        const { resourceTemplates } = await client.listResourceTemplates(undefined, opts);
        const tpl = resourceTemplates.find((r) => r.uriTemplate === 'fixture://echo/{word}');
        assert.ok(tpl, `fixture://echo/{word} listed (got: ${resourceTemplates.map((r) => r.uriTemplate).join(', ')})`);
        assert.equal(typeof tpl.name, 'string');

        const read = await client.readResource({ uri: 'fixture://echo/banana' }, opts);
        assert.equal(read.contents.length, 1);
        assert.equal(read.contents[0].uri, 'fixture://echo/banana');
        assert.equal(read.contents[0].text, 'banana');
      }));

    if (modern) {
      test('an unknown resource is -32602 with data.uri (SEP-2164)', { timeout: TEST_TIMEOUT_MS }, () =>
        withClient(async ({ client }) => {
          await assertRejects(client.readResource({ uri: 'fixture://does-not-exist' }, opts), (error) => {
            assert.equal(error.code, -32602, `error code (${error.message})`);
            assert.equal(error.data?.uri, 'fixture://does-not-exist');
          });
        }));
    }

    test('lists and gets the fixture prompt', { timeout: TEST_TIMEOUT_MS }, () =>
      withClient(async ({ client }) => {
        const { prompts } = await client.listPrompts(undefined, opts);
        const prompt = prompts.find((p) => p.name === 'fixture_prompt');
        assert.ok(prompt, `fixture_prompt listed (got: ${prompts.map((p) => p.name).join(', ')})`);
        const topicArg = prompt.arguments?.find((a) => a.name === 'topic');
        assert.ok(topicArg, 'declares the topic argument');
        assert.equal(topicArg.required, true);

        const got = await client.getPrompt({ name: 'fixture_prompt', arguments: { topic: 'octopuses' } }, opts);
        assert.equal(got.messages.length, 1);
        assert.equal(got.messages[0].role, 'user');
        assert.equal(got.messages[0].content.type, 'text');
        assert.match(got.messages[0].content.text, /octopuses/);
      }));
  });
}

// Confirmation through the protocol, end to end: the official client (@modelcontextprotocol/client 2.4.0, pinned
// to 2026-07-28) declares form elicitation and answers the server's `input_required` question with its own
// `elicitation/create` handler, which the SDK calls and then retries the tool call with the answer and the
// server's requestState. A yes deletes, a no leaves the item as it was; a client that declares no elicitation
// gets today's behaviour (the write runs at once). scripts/e2e.sh runs this file against the Worker and the
// native server. What it creates is tagged e2e-confirm and deleted for good by the end.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { MODERN_VERSION, REQUEST_TIMEOUT_MS, TEST_TIMEOUT_MS, WRITE_SCOPES, authHeaders, connectValidating, mcpUrl, textOf } from './helpers.mjs';

const MARK = 'e2e-confirm';

/** A modern client; with `answer`, it declares form elicitation and answers every question with it. */
async function connect(answer) {
  const options = { versionNegotiation: { mode: { pin: MODERN_VERSION } } };
  if (answer) options.capabilities = { elicitation: { form: {} } };
  const client = new Client({ name: 'zotero-mcp-e2e-confirm', version: '1.0.0' }, options);
  const asked = [];
  if (answer) {
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  }
  const headers = await authHeaders(WRITE_SCOPES);
  await connectValidating(client, new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
  const call = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
  return { client, asked, call };
}

describe('destructive writes ask the person through the protocol', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let yes;
  let no;
  let plain;

  before(async () => {
    yes = await connect(() => ({ action: 'accept', content: { confirm: true } }));
    no = await connect(() => ({ action: 'decline' }));
    plain = await connect(null);
  });

  after(async () => {
    for (const c of [yes, no, plain]) await c?.client.close();
  });

  /** A new item of this run, by key. */
  async function created(title) {
    const result = await plain.call('zotero_create_items', { items: [{ itemType: 'journalArticle', title, tags: [{ tag: MARK }] }] });
    assert.ok(!result.isError, textOf(result));
    const key = result.structuredContent.created[0];
    assert.match(key, /^[A-Z0-9]{8}$/);
    return key;
  }

  async function exists(key) {
    const result = await plain.call('zotero_get_item', { key });
    return !result.isError;
  }

  it('deletes on yes, after showing the title it deletes', async () => {
    const key = await created('Confirmation e2e: delete me on yes');
    const result = await yes.call('zotero_delete_items', { keys: [key], permanent: true });
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual(result.structuredContent.deleted, [key]);
    assert.equal(yes.asked.length, 1, 'asked once');
    const { message, requestedSchema } = yes.asked[0];
    assert.match(message, /^Delete 1 item\(s\) for good/);
    assert.ok(message.includes('Confirmation e2e: delete me on yes') && message.includes(key), message);
    assert.equal(requestedSchema.properties.confirm.type, 'boolean');
    assert.equal(await exists(key), false);
  });

  it('changes nothing on no', async () => {
    const key = await created('Confirmation e2e: keep me on no');
    const result = await no.call('zotero_delete_items', { keys: [key], permanent: true });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /declined .*Nothing was changed/);
    assert.equal(no.asked.length, 1);
    assert.equal(await exists(key), true, 'the item is still there');
    // Cleaned up by the client that says yes.
    const cleaned = await yes.call('zotero_delete_items', { keys: [key], permanent: true });
    assert.deepEqual(cleaned.structuredContent.deleted, [key], textOf(cleaned));
  });

  it('does not ask a client that cannot show a form', async () => {
    const key = await created('Confirmation e2e: no form');
    const result = await plain.call('zotero_delete_items', { keys: [key], permanent: true });
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual(result.structuredContent.deleted, [key]);
    assert.equal(await exists(key), false);
  });
});

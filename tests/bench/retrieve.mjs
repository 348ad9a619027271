// zotero_retrieve over a 300-page PDF (tests/bench/long-pdf.py) through the Worker (release wasm under `wrangler
// dev`) and the native server, the file on the simulator's Zotero Storage. Run by scripts/bench-retrieve.sh, which
// sets WORKER_URL, NATIVE_URL, ITEM, ATTACHMENT and UPLOAD.
//
// Per server: the first call (download, open, extract all 300 pages, cache them, rank: "cold"), the same call
// again (pages from CACHE_KV, chunked and ranked anew: "cached", median of ROUNDS), and another question on the
// cached pages. Compare within one run; absolute times on a shared machine are noisy.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { modernRequest, oauthFlow, READ_SCOPES, WRITE_SCOPES } from '../e2e/helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const { ITEM, ATTACHMENT, UPLOAD } = process.env;
const targets = [
  { name: 'worker', url: process.env.WORKER_URL },
  { name: 'native', url: process.env.NATIVE_URL },
];

async function call(url, auth, name, args) {
  const { headers, body } = modernRequest('tools/call', { name, arguments: args }, { headers: { authorization: auth } });
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${name}: HTTP ${response.status}: ${text.slice(0, 400)}`);
  }
  return JSON.parse(text.startsWith('{') ? text : text.split('\ndata: ')[1]);
}

// The PDF stored first, through the native server, as a user's upload would be.
{
  const native = targets.find((t) => t.name === 'native');
  process.env.MCP_URL = native.url;
  const auth = `Bearer ${(await oauthFlow(WRITE_SCOPES)).access_token}`;
  const pdf = readFileSync(UPLOAD);
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length }).end(pdf);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sourceUrl = `http://127.0.0.1:${server.address().port}/long.pdf`;
  await call(native.url, auth, 'zotero_put_attachment', { replaceAttachmentKey: ATTACHMENT, sourceUrl });
  server.close();
}

const questions = ['stomatal conductance under heat stress', 'calibration of uncertainty in prediction'];
async function timed(target, query) {
  const started = performance.now();
  const reply = await call(target.url, target.auth, 'zotero_retrieve', {
    itemKeys: [ITEM],
    query,
    sources: ['fulltext'],
    passages: 6,
  });
  const elapsed = performance.now() - started;
  const answer = reply.result.structuredContent;
  const read = answer.items[0].attachments[0];
  if (read.coverage?.totalPages !== 300) throw new Error(`not the 300-page PDF: ${JSON.stringify(read)}`);
  return { elapsed, answer };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log('zotero_retrieve, fulltext of a 300-page PDF (1.1 MB, ~1 M characters) on Zotero Storage:');
console.log('| server | first call (download, extract, rank) | cached pages (median) | another question, cached (median) | passages | top page |');
console.log('|---|---|---|---|---|---|');
for (const target of targets) {
  process.env.MCP_URL = target.url;
  target.auth = `Bearer ${(await oauthFlow(READ_SCOPES)).access_token}`;
  const cold = await timed(target, questions[0]);
  const cached = [];
  for (let i = 0; i < ROUNDS; i++) cached.push((await timed(target, questions[0])).elapsed);
  const other = [];
  for (let i = 0; i < ROUNDS; i++) other.push((await timed(target, questions[1])).elapsed);
  const top = cold.answer.passages[0];
  console.log(
    `| ${target.name} | ${cold.elapsed.toFixed(0)} ms | ${median(cached).toFixed(0)} ms | ${median(other).toFixed(0)} ms | ` +
      `${cold.answer.passages.length} of ${cold.answer.matching} | ${top?.page} |`,
  );
}

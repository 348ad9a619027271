// zotero_check_references over a 60-reference LaTeX manuscript with its .bib, through the Worker (release wasm
// under `wrangler dev`) and the native server. Run by scripts/bench-check-references.sh, which sets WORKER_URL,
// NATIVE_URL, PROXY_URL (the counting proxy in front of the simulator: tests/bench/counting-proxy.mjs) and
// SOURCES_URL (the metadata services' stand-in: tests/e2e/sources-stub.mjs).
//
// The manuscript is generated here: 20 works of the demo library cited by their citation keys (Better BibTeX's
// `Citation Key:` line in `extra`), 11 DOIs the stand-in has recorded answers for (CrossRef's ten, among them a
// retracted paper, a preprint with its published version and a corrected article; DataCite's dataset), 17 DOIs
// it does not know (CrossRef then DataCite answer 404) and 12 entries without identifiers (CrossRef's
// bibliographic search; the stand-in searches its recorded works, and only CERMINE is among them, so only the
// CERMINE entry finds its work: the others' closest candidates share a few common words and are not taken). Each reference has a citing sentence, so every matched one gets a
// support check.
//
// Per server: one full check (limit 60, following nextCursor until there is none) with the library snapshot not
// yet cached ("cold"), then the same again ("warm"). Per run: the calls it took, the Zotero requests the proxy
// saw, the registry requests the stand-in saw, what the tool itself reported sending (`requests`: Zotero,
// registries and file downloads from the storage origin, which bypass the proxy), and the wall time of each call.
// Compare within one run; absolute times on a shared machine are noisy. BENCH_LOG=<file> writes every call's
// Zotero and registry requests there (JSON), for finding out where a count comes from.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';

import { modernRequest, oauthFlow, READ_SCOPES } from '../e2e/helpers.mjs';

const root = new URL('../../', import.meta.url);
const { PROXY_URL, SOURCES_URL } = process.env;
const targets = [
  { name: 'worker', url: process.env.WORKER_URL },
  { name: 'native', url: process.env.NATIVE_URL },
];
/** Calls one full check may take before the bench gives up (a cursor that never ends is a bug). */
const MAX_CALLS = 40;
const CALL_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------------------------------------------------------
// The manuscript.

const bibValue = (text) => String(text).replace(/[{}\\]/g, '').replace(/\s+/g, ' ').trim();
function bibEntry(type, key, fields) {
  const lines = Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `  ${name} = {${bibValue(value)}}`);
  return `@${type}{${key},\n${lines.join(',\n')}\n}`;
}

// 20 works of the demo library with a citation key (the first regular items that have one).
const demo = JSON.parse(readFileSync(new URL('crates/sim/demo/library.json', root), 'utf8'));
const inLibrary = demo.items
  .map((item) => item.data ?? item)
  .filter((data) => !['attachment', 'note', 'annotation'].includes(data.itemType) && !data.deleted)
  .map((data) => ({ data, key: /Citation Key:\s*(\S+)/.exec(data.extra ?? '')?.[1] }))
  .filter(({ key }) => key)
  .slice(0, 20)
  .map(({ data, key }) => ({
    key,
    kind: 'library',
    topic: data.title,
    bib: bibEntry('article', key, {
      author: (data.creators ?? []).filter((c) => c.lastName).map((c) => `${c.lastName}, ${c.firstName ?? ''}`).join(' and '),
      title: data.title,
      journal: data.publicationTitle,
      year: /\d{4}/.exec(data.date ?? '')?.[0],
      doi: data.DOI,
    }),
  }));

// 11 DOIs the stand-in answers, each entry written from its recorded record.
const fixture = (name) => JSON.parse(readFileSync(new URL(`crates/core/src/sources/resolve/fixtures/${name}`, root), 'utf8'));
const crossrefFixtures = [
  'crossref-journal-article-plos.json',
  'crossref-journal-article-elife.json',
  'crossref-book-chapter.json',
  'crossref-proceedings-article.json',
  'crossref-monograph.json',
  'crossref-posted-content.json',
  'crossref-retracted-wakefield.json',
  'crossref-preprint-with-published-version.json',
  'crossref-article-with-preprint.json',
  'crossref-corrected-plos.json',
];
const known = crossrefFixtures.map((name, at) => {
  const work = fixture(name).message;
  const family = work.author?.[0]?.family ?? 'Anon';
  const year = String(work.issued?.['date-parts']?.[0]?.[0] ?? '');
  const title = bibValue(work.title?.[0] ?? '').replace(/^RETRACTED:\s*/, '');
  const key = `${family.toLowerCase().replace(/[^a-z]/g, '')}${year}known${at}`;
  return {
    key,
    kind: 'known DOI',
    topic: title,
    bib: bibEntry('article', key, { author: `${family}, A.`, title, journal: work['container-title']?.[0], year, doi: work.DOI }),
  };
});
{
  const dataset = fixture('datacite-dataset.json').data.attributes;
  const key = `${dataset.creators[0].familyName.toLowerCase()}${dataset.publicationYear}dataset`;
  known.push({
    key,
    kind: 'known DOI',
    topic: dataset.titles[0].title,
    bib: bibEntry('misc', key, {
      author: `${dataset.creators[0].familyName}, ${dataset.creators[0].givenName ?? ''}`,
      title: dataset.titles[0].title,
      year: dataset.publicationYear,
      doi: dataset.doi,
    }),
  });
}

// Words for the made-up works (titles no registry or library has).
const SUBJECTS = ['soil moisture', 'canopy temperature', 'river discharge', 'urban heat', 'pollinator decline', 'grain filling',
  'groundwater recharge', 'leaf area index', 'frost damage', 'nitrogen uptake', 'crop rotation', 'seed dormancy',
  'root depth', 'wind erosion', 'snow cover', 'peat subsidence', 'salinity stress'];
const METHODS = ['a Bayesian hierarchical model', 'gradient boosting', 'satellite time series', 'a field experiment',
  'process-based simulation', 'a panel regression', 'transfer learning'];
const invented = (at) => `Estimating ${SUBJECTS[at % SUBJECTS.length]} with ${METHODS[at % METHODS.length]}: evidence from site ${at + 1}`;

// 17 DOIs nobody has recorded: CrossRef 404, then DataCite 404.
const unknown = Array.from({ length: 17 }, (_, at) => {
  const key = `unknown${2010 + (at % 14)}doi${at}`;
  const title = invented(at);
  return {
    key,
    kind: 'unknown DOI',
    topic: title,
    bib: bibEntry('article', key, {
      author: `Fieldworker${at}, B. and Analyst, C.`,
      title,
      journal: 'Journal of Invented Results',
      year: 2010 + (at % 14),
      doi: `10.5555/refcheck-bench.${at}`,
    }),
  };
});

// 12 entries without identifiers: CrossRef's bibliographic search. The first is CERMINE (a work the stand-in has
// recorded); the others are made up, so the candidates do not agree with them.
const unidentified = [
  {
    key: 'tkaczyk2015cermine',
    kind: 'search',
    topic: 'automatic extraction of structured metadata from scientific literature',
    bib: bibEntry('article', 'tkaczyk2015cermine', {
      author: 'Tkaczyk, Dominika and Szostek, Paweł and Fedoryszak, Mateusz and Dendek, Piotr Jan and Bolikowski, Łukasz',
      title: 'CERMINE: automatic extraction of structured metadata from scientific literature',
      journal: 'International Journal on Document Analysis and Recognition (IJDAR)',
      year: 2015,
      volume: 18,
      number: 4,
      pages: '317--335',
    }),
  },
  ...Array.from({ length: 11 }, (_, at) => {
    const key = `searched${2005 + at}entry${at}`;
    const title = invented(at + 17);
    return {
      key,
      kind: 'search',
      topic: title,
      bib: bibEntry('article', key, {
        author: `Surveyor${at}, D.`,
        title,
        journal: 'Proceedings of Imagined Agronomy',
        year: 2005 + at,
        volume: at + 1,
        pages: `${10 * at + 1}--${10 * at + 9}`,
      }),
    };
  }),
];

// Interleaved, so each call of a run checks a similar mix.
const groups = [inLibrary, known, unknown, unidentified];
const references = [];
for (let at = 0; references.length < 60; at++) {
  for (const group of groups) if (at < group.length) references.push(group[at]);
}
assert.equal(references.length, 60);
assert.equal(new Set(references.map((r) => r.key)).size, 60, 'every key once');

const tex = [
  '\\documentclass{article}',
  '% Generated by tests/bench/check-references.mjs: 60 references, one citing sentence each.',
  '\\begin{document}',
  '\\section{Introduction}',
  ...references.map((r, at) => `Result ${at + 1} concerns ${r.topic.replace(/[{}\\%$&#_^~]/g, ' ')} \\cite{${r.key}}.`),
  '\\bibliography{references}',
  '\\end{document}',
].join('\n');
const bib = references.map((r) => r.bib).join('\n\n');

// ---------------------------------------------------------------------------------------------------------------
// Counting and calling.

async function getJson(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}
/** Zotero requests seen by the proxy so far (its newest entry's id). */
const zoteroSeen = async () => (await getJson(`${PROXY_URL}/__counts?since=${Number.MAX_SAFE_INTEGER}`)).last;
/** The Zotero requests after the one with id `since`, as `METHOD path`. */
const zoteroSince = async (since) => (await getJson(`${PROXY_URL}/__counts?since=${since}`)).entries.map((e) => `${e.method} ${e.path}`);
/** Registry requests seen by the stand-in so far (its own /_requests reads left out). */
const registryLog = async () => (await getJson(`${SOURCES_URL}/_requests`)).filter((r) => !r.startsWith('GET /_requests'));
const registrySeen = async () => (await registryLog()).length;
const requestLog = [];

async function call(target, args) {
  const { headers, body } = modernRequest(
    'tools/call',
    { name: 'zotero_check_references', arguments: args },
    { headers: { authorization: target.auth } },
  );
  const response = await fetch(target.url, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"isError":true')) {
    throw new Error(`${target.name}: HTTP ${response.status}: ${text.slice(0, 600)}`);
  }
  return JSON.parse(text.startsWith('{') ? text : text.split('\ndata: ')[1]).result.structuredContent;
}

/** One full check of the manuscript: every call until no cursor is left. */
async function fullCheck(target, phase) {
  const run = { calls: [], zotero: 0, registry: 0, reported: 0, wall: 0, labels: [], counts: {} };
  const zotero0 = await zoteroSeen();
  const registry0 = await registrySeen();
  let cursor;
  do {
    assert.ok(run.calls.length < MAX_CALLS, `${target.name}: more than ${MAX_CALLS} calls for 60 references`);
    const zoteroBefore = await zoteroSeen();
    const registryBefore = await registrySeen();
    const started = performance.now();
    const out = await call(target, { text: tex, bibtex: bib, limit: 60, ...(cursor ? { cursor } : {}) });
    const elapsed = performance.now() - started;
    const zoteroPaths = await zoteroSince(zoteroBefore);
    const registryPaths = (await registryLog()).slice(registryBefore);
    const zotero = zoteroPaths.length;
    const registry = registryPaths.length;
    if (process.env.BENCH_LOG) {
      requestLog.push({ server: target.name, phase, call: run.calls.length + 1, references: out.references.map((r) => r.label), zotero: zoteroPaths, registry: registryPaths });
    }
    run.calls.push({ ms: elapsed, references: out.references.length, zotero, registry, reported: out.requests, stopped: out.stopped });
    run.wall += elapsed;
    run.reported += out.requests;
    run.labels.push(...out.references.map((r) => r.label));
    for (const [name, value] of Object.entries(out.counts)) run.counts[name] = (run.counts[name] ?? 0) + value;
    cursor = out.nextCursor;
  } while (cursor);
  run.zotero = (await zoteroSeen()) - zotero0;
  run.registry = (await registrySeen()) - registry0;
  assert.equal(run.labels.length, 60, `${target.name}: ${run.labels.length} references reported`);
  assert.equal(new Set(run.labels).size, 60, `${target.name}: a reference reported twice`);
  return run;
}

const ms = (value) => `${value.toFixed(0)} ms`;
const rows = [];
const details = [];
for (const target of targets) {
  process.env.MCP_URL = target.url;
  target.auth = `Bearer ${(await oauthFlow(READ_SCOPES)).access_token}`;
  for (const phase of ['cold', 'warm']) {
    const run = await fullCheck(target, phase);
    const times = run.calls.map((c) => c.ms);
    const c = run.counts;
    rows.push(
      `| ${target.name} | ${phase} | ${run.calls.length} | ${run.zotero} | ${run.registry} | ` +
        `${run.reported - run.zotero - run.registry} | ${run.reported} | ${ms(run.wall / run.calls.length)} | ` +
        `${ms(Math.max(...times))} | ${ms(run.wall)} | ${c.matched}/${c.notInLibrary}/${c.unresolved}, ${c.flagged} flagged |`,
    );
    details.push(
      `${target.name} ${phase}: ` +
        run.calls.map((call) => `${call.references} refs ${ms(call.ms)} (Zotero ${call.zotero}, registry ${call.registry}, reported ${call.reported})`).join('; '),
    );
  }
}

console.log('zotero_check_references, a 60-reference LaTeX manuscript with its .bib (limit 60, nextCursor until done):');
console.log(
  `  references: ${inLibrary.length} in the demo library by citation key, ${known.length} DOIs with recorded registry answers, ` +
    `${unknown.length} unknown DOIs (404), ${unidentified.length} without identifiers (bibliographic search)`,
);
console.log('| server | run | calls | Zotero requests | registry requests | other (files) | tool-reported requests | per call (mean) | slowest call | total | matched/notInLibrary/unresolved |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log('');
console.log('Per call:');
for (const line of details) console.log(`  ${line}`);
if (process.env.BENCH_LOG) writeFileSync(process.env.BENCH_LOG, JSON.stringify(requestLog, null, 1));

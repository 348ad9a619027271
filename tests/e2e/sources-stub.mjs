// A local stand-in for the public metadata services zotero_import_reference and zotero_check_references ask
// (CrossRef, DataCite, arXiv, Open Library, PubMed E-utilities, OpenAlex), which cannot be reached from the test
// machines. It answers with the recorded real responses in crates/core/src/sources/resolve/fixtures (see the
// README there), each at the path the real service uses under one prefix per service — the layout
// SOURCES_TEST_BASE_URL gives the server (honoured only with ENABLE_TEST_FIXTURES=1). Unknown records get the
// services' own not-found answers.
//
// CrossRef's records include the ones the reference check flags: a retracted paper (Wakefield et al. 1998, with
// Retraction Watch's retraction and correction notices), a bioRxiv preprint linking its published version, a
// journal article linking its preprint, and a PLOS paper with a correction. CrossRef's bibliographic search
// (`GET /crossref/works?query.bibliographic=…&rows=N`) searches every work recorded here (the records above and
// the five candidates CrossRef gave for a reference to CERMINE, Tkaczyk et al., IJDAR 2015) the way CrossRef
// does: a full-text match of the query against each work's bibliographic text, ranked by relevance, best first,
// each item with its `score`, and an empty list when no word of the query is in any record (see crossrefSearch).
//
// GET /_requests lists every request received so far ("METHOD /path?query"), for tests and benches that count
// what the servers asked.
//
// OpenAlex's recorded PDF link points at journals.plos.org; here it is rewritten to a PDF this stub serves
// (a freely licensed demo file), so the import downloads a real PDF over loopback.
//
// Usage: node tests/e2e/sources-stub.mjs <port> [--exit-after <seconds>]. Prints "listening" when ready.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = path.join(root, 'crates/core/src/sources/resolve/fixtures');
const fixture = (name) => readFileSync(path.join(fixtures, name));
const port = Number(process.argv[2] ?? 0);
const exitAfter = Number(process.argv[process.argv.indexOf('--exit-after') + 1] || 1800);

const crossref = {
  '10.1371/journal.pone.0000030': 'crossref-journal-article-plos.json',
  '10.7554/elife.01567': 'crossref-journal-article-elife.json',
  '10.1007/978-3-662-46370-3_13': 'crossref-book-chapter.json',
  '10.1109/iccv.2007.4408927': 'crossref-proceedings-article.json',
  '10.1017/9781108348843': 'crossref-monograph.json',
  '10.1101/2020.12.01.406702': 'crossref-posted-content.json',
  '10.1016/s0140-6736(97)11096-0': 'crossref-retracted-wakefield.json',
  '10.1101/097196': 'crossref-preprint-with-published-version.json',
  '10.1038/ng.3834': 'crossref-article-with-preprint.json',
  '10.1371/journal.pone.0033693': 'crossref-corrected-plos.json',
};
const crossrefSearchList = 'crossref-bibliographic-cermine.json';
const datacite = { '10.5061/dryad.8515': 'datacite-dataset.json' };
const openalex = { '10.1371/journal.pone.0000030': 'openalex-work-with-pdf.json', '10.7554/elife.01567': 'openalex-work-without-pdf.json' };
const arxiv = { '2206.06921': 'arxiv-2206.06921.xml', 'hep-ex/0307015': 'arxiv-hep-ex-0307015.xml' };

const requests = [];

// CrossRef's bibliographic search over the works recorded here. What is searched is the text CrossRef's index
// builds for a work's bibliographic look-up (CrossRef/cayenne, src/cayenne/elastic/convert.clj,
// `item-bibliographic-content`: the issued and print years, issue, volume, first and last page, ISSNs, ISBNs,
// every title, the container titles, and each contributor as initials and family name); the query is matched
// against it word by word, any word counting, and works are ranked by Elasticsearch's default relevance (BM25,
// k1 = 1.2, b = 0.75), best first. A query none of whose words is in any record gets CrossRef's answer for no
// hit: a work-list with no items and `total-results` 0. The scores are this index's, not CrossRef's: only their
// order means anything, as with CrossRef's own.
const fold = (text) => String(text ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const words = (text) => fold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
const crossrefWorks = (() => {
  const works = new Map();
  const add = (work) => work?.DOI && !works.has(work.DOI.toLowerCase()) && works.set(work.DOI.toLowerCase(), work);
  for (const file of Object.values(crossref)) add(JSON.parse(fixture(file)).message);
  for (const work of JSON.parse(fixture(crossrefSearchList)).message.items) add(work);
  return [...works.values()];
})();
function bibliographicText(work) {
  const year = (date) => date?.['date-parts']?.[0]?.[0];
  const [first, last] = String(work.page ?? '').split('-');
  const initials = (person) =>
    person.name ?? `${(person.given ?? '').split(/[\s-]+/).map((part) => part.charAt(0)).join(' ')} ${person.family ?? ''}`;
  const people = ['author', 'chair', 'editor', 'translator'].flatMap((role) => work[role] ?? []);
  return [
    year(work.issued), year(work['published-print']), work.issue, work.volume, first, last,
    ...(work.ISSN ?? []), ...(work.ISBN ?? []),
    ...['title', 'subtitle', 'short-title', 'original-title', 'group-title'].flatMap((key) => [work[key] ?? []].flat()),
    ...(work['container-title'] ?? []), ...(work['short-container-title'] ?? []),
    ...people.map(initials),
  ].filter((part) => part !== undefined && part !== null).join(' ');
}
const crossrefIndex = crossrefWorks.map((work) => ({ work, words: words(bibliographicText(work)) }));
const averageLength = crossrefIndex.reduce((sum, doc) => sum + doc.words.length, 0) / crossrefIndex.length;
function crossrefSearch(query, rows, offset) {
  const terms = [...new Set(words(query))];
  const idf = (term) => {
    const n = crossrefIndex.filter((doc) => doc.words.includes(term)).length;
    return Math.log(1 + (crossrefIndex.length - n + 0.5) / (n + 0.5));
  };
  const weights = new Map(terms.map((term) => [term, idf(term)]));
  const hits = [];
  for (const { work, words: text } of crossrefIndex) {
    let score = 0;
    for (const term of terms) {
      const tf = text.filter((word) => word === term).length;
      if (tf) score += (weights.get(term) * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * text.length) / averageLength));
    }
    if (score > 0) hits.push({ ...work, score: Math.round(score * 1e5) / 1e5 });
  }
  hits.sort((a, b) => b.score - a.score || a.DOI.localeCompare(b.DOI));
  return {
    status: 'ok',
    'message-type': 'work-list',
    'message-version': '1.0.0',
    message: {
      facets: {},
      'total-results': hits.length,
      items: hits.slice(offset, offset + rows),
      'items-per-page': rows,
      query: { 'start-index': offset, 'search-terms': null },
    },
  };
}
// The parameters the server's search may send. CrossRef refuses a parameter it does not know with a
// validation failure; so does this stand-in for one it does not implement (a filter, a sort, a field query),
// rather than answer as if it had applied it.
const CROSSREF_SEARCH_PARAMETERS = new Set(['query.bibliographic', 'rows', 'offset', 'mailto']);
function crossrefRefusal(name) {
  return {
    status: 'failed',
    'message-type': 'validation-failure',
    message: [{ type: 'parameter-not-allowed', value: name, message: `This route does not support ${name}` }],
  };
}

function send(res, status, type, body) {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  const url = new URL(req.url, `http://127.0.0.1:${server.address().port}`);
  const base = `http://127.0.0.1:${server.address().port}`;
  const route = decodeURIComponent(url.pathname);
  requests.push(`${req.method} ${route}${url.search}`);
  if (route === '/_requests') return send(res, 200, 'application/json', JSON.stringify(requests));
  let m;
  // Only the bibliographic search is served; any other listing of /works falls through to the plain 404 below.
  if (route === '/crossref/works' && url.searchParams.has('query.bibliographic')) {
    const unknown = [...url.searchParams.keys()].find((name) => !CROSSREF_SEARCH_PARAMETERS.has(name));
    if (unknown) return send(res, 400, 'application/json', JSON.stringify(crossrefRefusal(unknown)));
    // CrossRef's default page is 20 rows, its largest 1,000.
    const rows = Math.min(Math.max(Number.parseInt(url.searchParams.get('rows') ?? '20', 10) || 0, 0), 1000);
    const offset = Math.max(Number.parseInt(url.searchParams.get('offset') ?? '0', 10) || 0, 0);
    const answer = crossrefSearch(url.searchParams.get('query.bibliographic'), rows, offset);
    return send(res, 200, 'application/json', JSON.stringify(answer));
  }
  if ((m = route.match(/^\/crossref\/works\/(.+)$/))) {
    const file = crossref[m[1].toLowerCase()];
    return file
      ? send(res, 200, 'application/json', fixture(file))
      : send(res, 404, 'text/plain', fixture('crossref-not-found.txt'));
  }
  if ((m = route.match(/^\/datacite\/dois\/(.+)$/))) {
    const file = datacite[m[1].toLowerCase()];
    return file
      ? send(res, 200, 'application/vnd.api+json', fixture(file))
      : send(res, 404, 'application/vnd.api+json', fixture('datacite-not-found.json'));
  }
  if ((m = route.match(/^\/openalex\/works\/doi:(.+)$/))) {
    const file = openalex[m[1].toLowerCase()];
    if (!file) return send(res, 404, 'application/json', JSON.stringify({ error: 'Not Found' }));
    const work = JSON.parse(fixture(file));
    if (work.best_oa_location?.pdf_url) work.best_oa_location.pdf_url = `${base}/files/journal.pone.0000030.pdf`;
    return send(res, 200, 'application/json', JSON.stringify(work));
  }
  if (route === '/arxiv/api/query') {
    const id = (url.searchParams.get('id_list') ?? '').replace(/v\d+$/, '');
    return send(res, 200, 'application/atom+xml; charset=utf-8', fixture(arxiv[id] ?? 'arxiv-empty.xml'));
  }
  if (route === '/openlibrary/api/books') {
    const known = url.searchParams.get('bibkeys') === 'ISBN:9780980200447';
    return send(res, 200, 'application/json', known ? fixture('openlibrary-9780980200447.json') : '{}');
  }
  if (route === '/eutils/efetch.fcgi' && url.searchParams.get('id') === '30108519') {
    return send(res, 200, 'text/xml; charset=UTF-8', fixture('pubmed-efetch-30108519.xml'));
  }
  if (route === '/eutils/elink.fcgi') return send(res, 200, 'application/json', fixture('pmc-elink-6079548.json'));
  if (route === '/files/journal.pone.0000030.pdf') {
    return send(res, 200, 'application/pdf', readFileSync(path.join(root, 'crates/sim/demo/files/shortsample.pdf')));
  }
  send(res, 404, 'text/plain', 'not found');
});

server.listen(port, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
setTimeout(() => process.exit(0), exitAfter * 1000).unref();

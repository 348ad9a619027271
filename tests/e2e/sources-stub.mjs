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
// (`GET /crossref/works?query.bibliographic=…&rows=N`) has one recorded answer, the five candidates CrossRef gave
// for a reference to CERMINE (Tkaczyk et al., IJDAR 2015); every search gets it, whatever it asks, so a check of
// another reference without identifiers judges those candidates (and should find none of them certain).
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
// CrossRef's bibliographic search: one recorded work-list, the answer to every query.
const crossrefSearch = 'crossref-bibliographic-cermine.json';
const datacite = { '10.5061/dryad.8515': 'datacite-dataset.json' };
const openalex = { '10.1371/journal.pone.0000030': 'openalex-work-with-pdf.json', '10.7554/elife.01567': 'openalex-work-without-pdf.json' };
const arxiv = { '2206.06921': 'arxiv-2206.06921.xml', 'hep-ex/0307015': 'arxiv-hep-ex-0307015.xml' };

const requests = [];

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
  // Only the search is recorded; any other listing of /works falls through to the plain 404 below.
  if (route === '/crossref/works' && url.searchParams.has('query.bibliographic')) {
    return send(res, 200, 'application/json', fixture(crossrefSearch));
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

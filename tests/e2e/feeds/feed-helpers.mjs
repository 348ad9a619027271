// Pieces of tests/e2e/feeds.test.mjs: fetching a feed through the mirror's fill, reading it with the independent
// parsers (check_feed.py), and what each item of the simulator's feeds group (GET /_sim/feeds) must look like in
// each format. Not a test file itself.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The formats, their file extensions and Content-Types (the interface of zotero_export_link's feeds). */
export const FORMATS = {
  bibtex: { ext: 'bib', contentType: 'application/x-bibtex; charset=utf-8' },
  biblatex: { ext: 'bib', contentType: 'application/x-bibtex; charset=utf-8' },
  csljson: { ext: 'json', contentType: 'application/vnd.citationstyles.csl+json; charset=utf-8' },
  ris: { ext: 'ris', contentType: 'application/x-research-info-systems; charset=utf-8' },
};

/** How long a feed may answer 503 while the server's mirror of the library fills, and the most one wait may be. */
export const FILL_DEADLINE_MS = 180_000;
const MAX_RETRY_WAIT_MS = 10_000;
/** One feed request (a whole collection rendered): generous for a loaded two-core machine. */
const FETCH_TIMEOUT_MS = 60_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * GET (or HEAD) a feed URL; a 503 (the mirror still filling, each request advancing it) is retried after its
 * Retry-After (at most MAX_RETRY_WAIT_MS, 1 s when absent) until FILL_DEADLINE_MS. Returns { status, headers,
 * body, retries }.
 */
export async function fetchFeed(url, { method = 'GET', headers = {} } = {}) {
  const deadline = Date.now() + FILL_DEADLINE_MS;
  for (let retries = 0; ; retries++) {
    const response = await fetch(url, { method, headers, redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    const body = await response.text();
    if (response.status !== 503) return { status: response.status, headers: response.headers, body, retries };
    const retryAfter = response.headers.get('retry-after');
    assert.match(retryAfter ?? '', /^\d+$/, `a 503 says when to come back (Retry-After in seconds): ${retryAfter}; ${body.slice(0, 200)}`);
    const wait = Math.min(Number(retryAfter) * 1000 || 1000, MAX_RETRY_WAIT_MS);
    assert.ok(Date.now() + wait < deadline, `${url} still answers 503 after ${retries + 1} tries: ${body.slice(0, 200)}`);
    await sleep(wait);
  }
}

const PYTHON = process.env.FEEDS_PYTHON ?? fileURLToPath(new URL('../../../.venv/bin/python', import.meta.url));
const CHECKER = fileURLToPath(new URL('./check_feed.py', import.meta.url));

/** Runs check_feed.py FORMAT - on `body`: { code, out (its JSON when it accepted), err }. */
export function runChecker(format, body) {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [CHECKER, format, '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', (error) => reject(new Error(`cannot run ${PYTHON} (scripts/setup.sh makes .venv): ${error.message}`)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const text = Buffer.concat(out).toString('utf8');
      resolve({ code, out: code === 0 ? JSON.parse(text) : undefined, err: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.end(body);
  });
}

/** What the parsers read of a feed; fails with the parser's complaint when it refused the file. */
export async function parseFeed(format, body) {
  const { code, out, err } = await runChecker(format, body);
  assert.equal(code, 0, `the ${format} feed is refused by its parser:\n${err.slice(0, 3000)}`);
  return out;
}

/** Letters outside ASCII without a decomposition, as ASCII. */
const FOLD = { ø: 'o', Ø: 'O', ł: 'l', Ł: 'L', ß: 'ss', æ: 'ae', Æ: 'AE', œ: 'oe', đ: 'd', þ: 'th' };

/** A string as ASCII lower-case letters and digits only: accents and everything else dropped. */
export function fold(text) {
  return [...String(text ?? '').normalize('NFKD')]
    .map((c) => FOLD[c] ?? c)
    .join('')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** A title for comparison: NFC, markup of CSL's rich text taken out, white space collapsed. */
export function cleanTitle(title) {
  return String(title ?? '').replace(/<\/?[a-z][^>]*>/g, '').normalize('NFC').split(/\s+/).filter(Boolean).join(' ');
}

/** The entry types each format may give an item type (Zotero's own export translators, and the usual choices). */
const TYPES = {
  bibtex: {
    journalArticle: ['article'], magazineArticle: ['article'], book: ['book'], bookSection: ['incollection', 'inbook'],
    conferencePaper: ['inproceedings', 'conference'], thesis: ['phdthesis'], report: ['techreport'], webpage: ['misc'],
    preprint: ['misc', 'unpublished', 'article', 'techreport'],
  },
  biblatex: {
    journalArticle: ['article'], magazineArticle: ['article'], book: ['book'], bookSection: ['incollection', 'inbook'],
    conferencePaper: ['inproceedings'], thesis: ['thesis', 'phdthesis'], report: ['report', 'techreport'], webpage: ['online'],
    preprint: ['online', 'misc', 'unpublished', 'article', 'report'],
  },
  csljson: {
    journalArticle: ['article-journal'], magazineArticle: ['article-magazine'], book: ['book'], bookSection: ['chapter'],
    conferencePaper: ['paper-conference'], thesis: ['thesis'], report: ['report'], webpage: ['webpage'],
    preprint: ['article', 'manuscript'],
  },
  ris: {
    journalArticle: ['JOUR', 'EJOUR'], magazineArticle: ['MGZN'], book: ['BOOK'], bookSection: ['CHAP'],
    conferencePaper: ['CONF', 'CPAPER'], thesis: ['THES'], report: ['RPRT'], webpage: ['ELEC', 'WEB'],
    preprint: ['UNPB', 'JOUR', 'GEN', 'MANSCPT', 'INPR', 'ELEC'],
  },
};

/**
 * Checks a parsed feed against the planned items it must hold (`expected`, from GET /_sim/feeds) and the objects
 * it must not (`forbidden`: planned items of other collections, and the notes, attachments and trashed item):
 * count, titles, entry types. Returns the records by item key, for assertKeys.
 */
export function assertHolds(format, parsed, expected, forbidden) {
  const what = `${format} feed`;
  const byTitle = new Map();
  for (const record of parsed.records) {
    const folded = fold(record.title);
    assert.ok(!byTitle.has(folded), `${what}: two entries with the title ${JSON.stringify(record.title)}`);
    byTitle.set(folded, record);
  }
  for (const object of forbidden) {
    assert.ok(!byTitle.has(fold(object.title)), `${what} holds ${JSON.stringify(object.title)} (${object.why ?? object.collection}), which it must leave out`);
  }
  const missing = expected.filter((item) => !byTitle.has(fold(item.title)));
  assert.deepEqual(missing.map((i) => `${i.key} ${i.title}`), [], `${what}: items missing (found by title)`);
  assert.equal(parsed.entries, expected.length, `${what}: ${parsed.entries} entries, ${expected.length} planned`);

  const records = new Map(expected.map((item) => [item.key, byTitle.get(fold(item.title))]));
  const wrongTitles = expected
    .filter((item) => cleanTitle(records.get(item.key).title) !== cleanTitle(item.title))
    .map((item) => `${JSON.stringify(item.title)} reads as ${JSON.stringify(records.get(item.key).title)}`);
  assert.deepEqual(wrongTitles.slice(0, 10), [], `${what}: titles not as in Zotero once the format's markup is read (${wrongTitles.length})`);
  const wrongTypes = expected
    .filter((item) => !TYPES[format][item.itemType].includes(records.get(item.key).type))
    .map((item) => `${item.itemType} → ${records.get(item.key).type}`);
  assert.deepEqual([...new Set(wrongTypes)], [], `${what}: entry types (allowed: ${JSON.stringify(TYPES[format])})`);
  return records;
}

/**
 * Citation keys: every pinned key exactly, the one `extra` loses to the field nowhere, every other key made of the
 * first creator's name and the year (and unique). RIS carries keys only if it carries them for every entry.
 */
export function assertKeys(format, records, expected) {
  const what = `${format} feed`;
  const keys = expected.map((item) => records.get(item.key).key);
  if (format === 'ris' && keys.every((k) => k === null || k === undefined)) return;
  assert.ok(keys.every((k) => typeof k === 'string' && k.length > 0), `${what}: an entry without a citation key`);
  const seen = new Map();
  for (const key of keys) {
    const compared = format === 'csljson' ? key : key.toLowerCase();
    assert.ok(!seen.has(compared), `${what}: the key ${key} twice${format === 'csljson' ? '' : ' (BibTeX ignores case)'}`);
    seen.set(compared, key);
  }
  const wrong = [];
  for (const item of expected) {
    const key = records.get(item.key).key;
    if (item.citationKey) {
      if (key !== item.citationKey) wrong.push(`${item.key}: pinned ${item.citationKey}, got ${key}`);
      continue;
    }
    const words = String(item.firstCreator ?? '').split(/\s+/).map(fold).filter(Boolean);
    const lower = key.toLowerCase();
    if (words.length > 0 && !words.some((w) => lower.includes(w))) wrong.push(`${item.key}: ${key} does not name ${item.firstCreator}`);
    if (item.year && !key.includes(String(item.year))) wrong.push(`${item.key}: ${key} does not hold the year ${item.year}`);
  }
  assert.deepEqual(wrong, [], `${what}: citation keys`);
  for (const item of expected.filter((i) => i.overriddenKey)) {
    assert.ok(!seen.has(format === 'csljson' ? item.overriddenKey : item.overriddenKey.toLowerCase()), `${what}: ${item.overriddenKey} (in extra) is overridden by the citationKey field`);
  }
}

// A loopback proxy in front of zotero-sim that logs every request it forwards, so the side-by-side bench
// (tests/bench/sidebyside.mjs) can tell how many Zotero API requests one MCP call made, how many of them ran
// one after another, and how long the server spent waiting on them.
//
//   node tests/bench/counting-proxy.mjs <upstream base URL> [--port N] [--exit-after SECONDS] [--delay-ms MS]
//
// --delay-ms holds every answer that long before it is sent back, standing in for the 50–300 ms of a real Zotero
// round trip: against a loopback simulator that answers in a millisecond, requests sent together can look
// sequential only because the second connection took longer to open than the first answer.
//
// Listens on 127.0.0.1, on port N or else a free one (a fixed port lets another server be configured with the
// proxy as its Zotero API base before the proxy starts), and prints `listening http://127.0.0.1:PORT` as its
// first line. Every request is forwarded byte for byte (over a keep-alive agent, so the proxy adds no connection
// set-up of its own) and logged as { id, method, path, start, end } with start = request headers received,
// end = response fully written back, both performance.now() milliseconds of this process (only differences
// between them mean anything).
//
// Control endpoints on the same port (never forwarded):
//   GET  /__counts?since=<id>  the entries with a larger id, and `last`, the newest id (the next call's `since`)
//   POST /__reset              forget every entry
//   GET  /__pong[?bytes=N]     after --delay-ms, `{}` or a JSON string of N bytes, not logged: what the floor
//                              Worker fetches to time one subrequest of local workerd (and its cost per byte)
//                              with nothing behind it
// Exits by itself after --exit-after seconds (default 1800), like the other servers of the bench.

import http from 'node:http';

const LOG_LIMIT = 10_000;

function numberOption(argv, name, fallback) {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} needs a whole number`);
  return value;
}

function parseArgs(argv) {
  const upstream = new URL(argv[0] ?? '');
  const exitAfter = numberOption(argv, '--exit-after', 1800);
  if (exitAfter === 0) throw new Error('--exit-after needs a number of seconds');
  return { upstream, port: numberOption(argv, '--port', 0), exitAfter, delayMs: numberOption(argv, '--delay-ms', 0) };
}

const { upstream, port, exitAfter, delayMs } = parseArgs(process.argv.slice(2));
const agent = new http.Agent({ keepAlive: true });
const log = [];
let lastId = 0;

// An entry is logged when the request arrives, so a call's requests that are still in flight when the bench
// reads the log show up with `end: null` instead of being missed.
function record(request) {
  const entry = {
    id: ++lastId,
    method: request.method,
    path: request.url,
    start: performance.now(),
    end: null,
    bytes: 0,
  };
  log.push(entry);
  // Bounded memory over a long run: the bench only ever reads the last few entries.
  if (log.length > LOG_LIMIT) log.splice(0, log.length - LOG_LIMIT);
  return entry;
}

function forward(request, response) {
  const entry = record(request);
  // 'finish': the last byte went to the socket; 'close' also covers an answer cut short.
  const done = () => {
    entry.end ??= performance.now();
  };
  response.on('finish', done);
  response.on('close', done);
  const headers = { ...request.headers, host: upstream.host };
  const outgoing = http.request(
    { hostname: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers, agent },
    (answer) => {
      const send = () => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        // The answer's size: what the server's runtime had to take in (the bench charges the runtime's cost
        // per byte, measured with /__pong, to neither server). Counted only once piping starts: a 'data'
        // listener attached earlier would start the flow during the delay and lose the bytes.
        answer.on('data', (chunk) => {
          entry.bytes += chunk.length;
        });
        answer.pipe(response);
      };
      if (delayMs > 0) setTimeout(send, delayMs);
      else send();
    },
  );
  outgoing.on('error', (error) => {
    if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
    response.end(`counting-proxy: ${error.message}\n`);
  });
  request.pipe(outgoing);
}

function answerJson(response, value) {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

function control(request, response, url) {
  if (request.method === 'GET' && url.pathname === '/__counts') {
    const since = Number(url.searchParams.get('since') ?? 0);
    answerJson(response, { last: lastId, entries: log.filter((e) => e.id > since) });
  } else if (request.method === 'GET' && url.pathname === '/__pong') {
    const bytes = Math.min(Number(url.searchParams.get('bytes') ?? 0) || 0, 10_000_000);
    setTimeout(() => answerJson(response, bytes > 2 ? 'x'.repeat(bytes - 2) : {}), delayMs);
  } else if (request.method === 'POST' && url.pathname === '/__reset') {
    log.length = 0;
    answerJson(response, { last: lastId });
  } else {
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('counting-proxy: unknown control endpoint\n');
  }
}

const server = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://proxy.invalid');
  if (url.pathname.startsWith('/__')) control(request, response, url);
  else forward(request, response);
});
// Upstream keep-alive is only worth it if the downstream side (workerd, node) keeps its connections too.
server.keepAliveTimeout = 60_000;

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
});
setTimeout(() => process.exit(0), exitAfter * 1000).unref();
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));

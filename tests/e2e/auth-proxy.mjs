// A loopback proxy that adds a bearer token to every request, for the MCP conformance suite
// (scripts/conformance.sh), which has no way to send one.
//
//   node tests/e2e/auth-proxy.mjs http://127.0.0.1:8787/mcp
//
// It gets a read-only token through the real OAuth flow (DCR, consent form with the test password,
// code exchange with PKCE), listens on a free loopback port, prints its MCP URL as the first line
// of stdout, and forwards each request to the Worker byte for byte, Host header included (the
// DNS-rebinding scenario depends on it), adding `Authorization: Bearer …` when the request has none.
// Nothing on the server side changes: the Worker has no unauthenticated mode to switch on.

import http from 'node:http';

const target = new URL(process.argv[2] ?? '');
process.env.MCP_URL = target.toString();
const { oauthFlow } = await import('./helpers.mjs');

// Not bound to a resource: the suite reaches the Worker through the proxy's own host:port.
const { access_token: token } = await oauthFlow(['zotero:read'], { bound: false });

const server = http.createServer((request, response) => {
  const headers = { ...request.headers };
  if (!headers.authorization) headers.authorization = `Bearer ${token}`;
  const upstream = http.request(
    { hostname: target.hostname, port: target.port, method: request.method, path: request.url, headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  upstream.on('error', (error) => {
    response.writeHead(502, { 'content-type': 'text/plain' });
    response.end(`auth-proxy: ${error.message}\n`);
  });
  request.pipe(upstream);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`http://127.0.0.1:${port}${target.pathname}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}

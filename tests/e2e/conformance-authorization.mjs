// Runs the conformance suite's authorization-server scenarios against the Worker's OAuth server, playing
// the person at the browser for the one that needs it (scripts/conformance.sh calls this).
//
//   node tests/e2e/conformance-authorization.mjs <mcp-url> <conformance-cli> <spec-version> <output-dir>
//
// - authorization-server-metadata-endpoint: RFC 8414 metadata, no interaction.
// - authorization-code-grant: the suite prints an authorization URL and waits for the redirect to its
//   loopback callback. This script registers a public client for that callback (DCR), posts the consent
//   form with the test password as a browser would, and follows the 303 to the suite's callback.
// Exit status: non-zero when a scenario failed. Needs Node >= 22 on PATH (the suite's requirement).

import { spawn } from 'node:child_process';
import net from 'node:net';

const [mcp, cli, spec, outDir] = process.argv.slice(2);
process.env.MCP_URL = mcp;
const { TEST_PASSWORD, postForm, registerClient } = await import('./helpers.mjs');
const issuer = new URL(mcp).origin;

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs one scenario; `onLine` sees each line of its stdout. Resolves with the exit code. */
function run(args, onLine = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'authorization', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) onLine(line.trim());
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

// Both scenarios run in one invocation: the code grant reads the metadata the first one fetched.
console.log(`\n=== conformance: authorization-server scenarios @ ${spec} ===`);
const port = await freePort();
const client = await registerClient({ client_name: 'MCP conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`] });
let approval;
const code = await run(
  ['--url', issuer, '--client-id', client.client_id, '--resource', mcp, '--port', String(port), '--spec-version', spec, '--output-dir', outDir],
  (line) => {
    if (!approval && line.startsWith(`${issuer}/authorize?`)) {
      approval = (async () => {
        const consent = await postForm(line, { password: TEST_PASSWORD, scope: ['zotero:read'] });
        if (consent.status !== 303) throw new Error(`consent form answered ${consent.status}`);
        // The suite prints the URL before its callback server listens ("Callback server started" comes after):
        // a redirect followed at once can find nothing there. Deliver it when the server is up (10 s at most).
        const callback = consent.headers.get('location');
        for (let attempt = 0; ; attempt += 1) {
          try {
            await fetch(callback, { signal: AbortSignal.timeout(10_000) });
            break;
          } catch (error) {
            if (attempt >= 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
        }
      })().catch((error) => console.error(`conformance-authorization: ${error.message}`));
    }
  },
);
await approval;
process.exit(code === 0 ? 0 : 1);

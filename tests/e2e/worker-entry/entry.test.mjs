// The Worker's JavaScript entry (src/entry.mjs), which scripts/build.sh writes beside the wasm-bindgen glue in
// place of a generated one. scripts/e2e.sh runs this file against the Worker only, after the rest of the suite:
// its trap replaces the wasm instance, which must not happen under another test's requests.
//
// - Every entry point the glue exports is handled by the entry, and every Durable Object class the configurations
//   bind is exported by it (a new `#[event]` or `#[durable_object]` fails here until src/entry.mjs has it).
// - build/ serves the entry as committed.
// - After a Rust panic (a trap), the next requests are served, tools and Durable Object included.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  fetchWithTimeout,
  modernRequest,
  oauthFlow,
  postMcp,
  READ_SCOPES,
  TEST_TIMEOUT_MS,
  workerUrl,
} from '../helpers.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path) => readFileSync(root + path, 'utf8');

// The glue's own plumbing, not entry points.
const PLUMBING = new Set(['__worker_init_state', '__wbg_reset_state']);

function glueExports(glue) {
  const functions = [...glue.matchAll(/^export (?:async )?function\s*([A-Za-z0-9_$]+)\s*\(/gm)].map((m) => m[1]);
  const classes = [...glue.matchAll(/^export class ([A-Za-z0-9_$]+)/gm)].map((m) => m[1]);
  return { functions, classes };
}

function durableObjectClasses(config) {
  return [...config.matchAll(/^class_name\s*=\s*"([^"]+)"/gm)].map((m) => m[1]);
}

test('every entry point of the glue is served by src/entry.mjs', () => {
  const entry = read('src/entry.mjs');
  const { functions } = glueExports(read('build/index.js'));
  assert.ok(functions.includes('fetch') && functions.includes('scheduled'), `glue exports: ${functions.join(', ')}`);
  // The glue restarts the wasm instance after a trap only when built with the reset-state function.
  assert.ok(functions.includes('__wbg_reset_state'), 'the glue has no __wbg_reset_state: see scripts/build.sh');
  for (const name of functions) {
    if (PLUMBING.has(name)) continue;
    assert.match(entry, new RegExp(`^  ${name}\\(`, 'm'), `the Worker class in src/entry.mjs has no ${name} handler`);
    assert.match(entry, new RegExp(`glue\\.${name}\\(`), `the ${name} handler does not call the glue's ${name}`);
  }
});

test('every Durable Object class the configurations bind is exported by the entry', () => {
  const entry = read('src/entry.mjs');
  const { classes } = glueExports(read('build/index.js'));
  const bound = new Set([...durableObjectClasses(read('wrangler.toml')), ...durableObjectClasses(read('tests/e2e/wrangler.test.toml'))]);
  assert.ok(bound.size > 0, 'wrangler.toml binds no Durable Object: this test reads the wrong file');
  for (const name of bound) {
    assert.ok(classes.includes(name), `the glue exports no class ${name}`);
    assert.match(entry, new RegExp(`^export class ${name} \\{`, 'm'), `src/entry.mjs does not export ${name}`);
    assert.match(entry, new RegExp(`new glue\\.${name}\\(`), `${name} in src/entry.mjs does not construct the glue's`);
  }
});

test('build/ serves the committed entry', () => {
  assert.equal(read('build/worker/shim.mjs'), read('src/entry.mjs'), 'build/ is stale: run make build');
  assert.match(read('build/index.js'), /^import [A-Za-z0-9_$]+ from "\.\/index_bg\.wasm";$/m);
});

// A whole sign-in (its password check counts in the login throttle's Durable Object), then an MCP request.
async function signInAndDiscover() {
  const { access_token: token } = await oauthFlow(READ_SCOPES, { bound: false });
  const headers = { authorization: `Bearer ${token}` };
  const res = await postMcp(modernRequest('server/discover', {}, { headers }));
  assert.equal(res.status, 200, `server/discover after a trap: ${res.status}`);
  return res;
}

for (const where of ['first-poll', 'after-await']) {
  test(`a panic (${where}) fails its own request only: the next ones are served`, { timeout: TEST_TIMEOUT_MS }, async () => {
    const before = await fetchWithTimeout(workerUrl('/health'));
    assert.equal(before.status, 200);

    const trapped = await fetchWithTimeout(workerUrl(`/__fixtures/trap/${where}`));
    assert.ok(trapped.status >= 500, `the trapping request answered ${trapped.status}`);
    await trapped.arrayBuffer();

    // Without the entry's recovery every later call fails ("Module terminated") until the isolate is evicted.
    const health = await fetchWithTimeout(workerUrl('/health'));
    assert.equal(health.status, 200, `/health after a trap: ${health.status}`);
    await signInAndDiscover();
  });
}

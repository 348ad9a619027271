// The first request of a fresh isolate, side by side (issue 10: "no slower than theirs"). Run by
// scripts/bench-coldstart.sh (`make bench`), which writes a start script for this project's Worker.
//
//   COLD_TARGETS="name=startScript=mcpUrl[=token] ..."   space-separated. startScript is an executable that runs
//                 the server in the foreground under `wrangler dev` (or anything printing "Ready on" once it
//                 listens); it is started afresh for every round and stopped with its process group afterwards.
//                 token: a bearer token that outlives restarts (absent: one is obtained once, through the OAuth
//                 flow of tests/e2e/helpers.mjs, from a start that is not measured).
//   COLD_ROUNDS=5  fresh starts per target (the targets alternate)
//
// Per round and target: start the server, wait for "Ready on" and then SETTLE_MS more (so what is measured is
// not the loader racing the request), then time a legacy `initialize` with the bearer token: its first exchange
// (a fresh isolate: the wasm or the JavaScript runs for the first time, V8 compiles what it touches), then
// WARM_CALLS more of the same. Printed: median first, median warm, and first - warm (the fresh isolate's cost).

import { spawn } from 'node:child_process';

import { decodeResponse, legacyRequest, oauthFlow, READ_SCOPES } from '../e2e/helpers.mjs';

const ROUNDS = Number(process.env.COLD_ROUNDS ?? 5);
const WARM_CALLS = 15;
const SETTLE_MS = 1500;
const READY_TIMEOUT_MS = 90_000;

const targets = (process.env.COLD_TARGETS ?? '')
  .split(/\s+/)
  .filter(Boolean)
  .map((spec) => {
    const [name, script, url, token] = spec.split('=');
    if (!name || !script || !url) throw new Error(`COLD_TARGETS entry "${spec}" is not name=startScript=mcpUrl[=token]`);
    return { name, script, url, token, first: [], warm: [] };
  });
if (targets.length === 0) throw new Error('COLD_TARGETS is empty');

// Starts a target's script in its own process group; resolves once it printed "Ready on", then settles.
async function start(target) {
  const child = spawn(target.script, [], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${target.name}: not ready in time:\n${output.slice(-2000)}`)), READY_TIMEOUT_MS);
    const seen = (chunk) => {
      output += chunk;
      if (/Ready on/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${target.name}: its start script exited (${code}):\n${output.slice(-2000)}`));
    });
  });
  await ready;
  child.removeAllListeners('exit');
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return child;
}

async function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10_000));
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone in between
    }
  }
  // workerd's port is released a moment after it exits.
  await new Promise((resolve) => setTimeout(resolve, 500));
}

async function initialize(target) {
  const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'zotero-mcp-cold', version: '1' } };
  const { body, headers } = legacyRequest('initialize', params, { headers: { authorization: `Bearer ${target.token}` } });
  const started = performance.now();
  const response = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify(body) });
  const decoded = await decodeResponse(response);
  const ms = performance.now() - started;
  if (response.status !== 200 || !decoded.json?.result) {
    throw new Error(`${target.name}: initialize answered ${response.status}: ${JSON.stringify(decoded.json ?? decoded.text)}`);
  }
  return ms;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

for (const target of targets) {
  if (target.token) continue;
  const child = await start(target);
  try {
    process.env.MCP_URL = target.url; // helpers.mjs finds the server through it
    target.token = (await oauthFlow(READ_SCOPES)).access_token;
  } finally {
    await stop(child);
  }
}

for (let round = 0; round < ROUNDS; round += 1) {
  const order = round % 2 ? [...targets].reverse() : targets;
  for (const target of order) {
    const child = await start(target);
    try {
      target.first.push(await initialize(target));
      const warm = [];
      for (let i = 0; i < WARM_CALLS; i += 1) warm.push(await initialize(target));
      target.warm.push(median(warm));
    } finally {
      await stop(child);
    }
  }
}

const fmt = (ms) => ms.toFixed(1).padStart(8);
console.log(`\nFirst request of a fresh isolate: legacy initialize with a bearer token, ${ROUNDS} fresh starts each`);
console.log(`${'target'.padEnd(12)}${'first ms'.padStart(10)}${'warm ms'.padStart(10)}${'first-warm'.padStart(12)}   firsts`);
for (const t of targets) {
  const first = median(t.first);
  const warm = median(t.warm);
  console.log(`${t.name.padEnd(12)}  ${fmt(first)}  ${fmt(warm)}    ${fmt(first - warm)}   ${t.first.map((v) => v.toFixed(0)).join(' ')}`);
}
if (targets.length > 1) {
  const [ours, ...others] = targets;
  for (const other of others) {
    const ratio = median(other.first) / median(ours.first);
    console.log(`${other.name} / ${ours.name}, first request: ${ratio.toFixed(2)}`);
  }
}
process.exit(0);

// zotero_check_references on hostile manuscripts of a million characters, against the release native server
// (read-only, registries off). Run by scripts/bench-check-references-hostile.sh, which starts a fresh server per
// shape (VmHWM only grows over a process's life) and passes its pid and URL: SHAPE, SERVER_PID, SERVER_URL and
// CLK_TCK (clock ticks per second, `getconf CLK_TCK`). Prints one JSON line per shape:
// - the server's CPU seconds for the call (utime + stime of /proc/<pid>/stat, every thread, before and after);
// - its peak resident memory (VmHWM of /proc/<pid>/status) after the call, and the increase the call made;
// - the slowest answer of GET /health, polled every 50 ms while the call ran (the server answers on one thread;
//   the manuscript is read on another);
// - the call's wall time and what it answered (a refusal's first words, or the references counted).
// Targets: under 2 s of CPU, under 200 MB, /health within 0.5 s.

import { readFileSync } from 'node:fs';

const { SHAPE, SERVER_PID, SERVER_URL } = process.env;
const CLK_TCK = Number(process.env.CLK_TCK || 100);
const MEGABYTE = 1_000_000;
const HEALTH_EVERY_MS = 50;

/** `piece(0) piece(1) …` up to a million characters (the most `text` takes), whole pieces only. */
function fill(piece, prefix = '') {
  const parts = [prefix];
  let length = prefix.length;
  for (let n = 0; ; n++) {
    const part = piece(n);
    if (length + part.length > MEGABYTE) break;
    parts.push(part);
    length += part.length;
  }
  return parts.join('');
}

// The four shapes of the security review, a million characters each, and two that stay within the limits (so
// the whole text is read and the call goes on to check references against the library).
const SHAPES = {
  initials: { format: 'auto', text: () => 'A. '.repeat(MEGABYTE / 3) },
  latex: { format: 'auto', text: () => fill((n) => `See \\cite{k${n}}. `) },
  pandoc: { format: 'markdown', text: () => fill((n) => `@k${n} `) },
  dois: { format: 'auto', text: () => fill((n) => `10.1000/bench.${String(n).padStart(7, '0')}\n`) },
  'latex-within-limits': {
    format: 'auto',
    text: () => fill((n) => `Lorem ipsum dolor sit amet, as seen in \\cite{k${n % 2000}}. `),
  },
  'pandoc-within-limits': {
    format: 'markdown',
    text: () => fill((n) => `@k${n % 2000} and the words of this long sentence go on and on `, '['),
  },
};

function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After "pid (comm) ": state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function peakKiB(pid) {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
  return match ? Number(match[1]) : NaN;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(text, format) {
  // A 2025-era request (no `_meta` envelope): nothing here needs the e2e helpers or their packages.
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'zotero_check_references',
      arguments: { text, format, checkRegistry: false, checkSupport: false },
    },
  };
  const response = await fetch(`${SERVER_URL}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  });
  const answer = await response.json();
  const result = answer.result ?? {};
  if (result.isError) return `refused: ${String(result.content?.[0]?.text ?? '').slice(0, 110)}`;
  if (answer.error) return `error: ${JSON.stringify(answer.error).slice(0, 110)}`;
  const out = result.structuredContent ?? {};
  return `${out.format}: ${out.totalReferences} references, ${out.references?.length} checked`;
}

async function main() {
  const shape = SHAPES[SHAPE];
  if (!shape) throw new Error(`SHAPE must be one of ${Object.keys(SHAPES).join(', ')}`);
  const text = shape.text();
  const pid = Number(SERVER_PID);
  // A first /health, so its own one-time checks are not counted against the call.
  await fetch(`${SERVER_URL}/health`);
  const cpuBefore = cpuSeconds(pid);
  const peakBefore = peakKiB(pid);
  const started = performance.now();
  let done = false;
  let worstHealth = 0;
  let polls = 0;
  const answer = call(text, shape.format).finally(() => {
    done = true;
  });
  while (!done) {
    const asked = performance.now();
    await fetch(`${SERVER_URL}/health`, { signal: AbortSignal.timeout(60_000) });
    const took = performance.now() - asked;
    worstHealth = Math.max(worstHealth, took);
    polls += 1;
    await sleep(Math.max(0, HEALTH_EVERY_MS - took));
  }
  const outcome = await answer;
  const wall = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(pid) - cpuBefore;
  const peak = peakKiB(pid);
  console.log(
    JSON.stringify({
      shape: SHAPE,
      chars: text.length,
      format: shape.format,
      cpuSeconds: Number(cpu.toFixed(2)),
      peakMB: Number((peak / 1024).toFixed(1)),
      peakIncreaseMB: Number(((peak - peakBefore) / 1024).toFixed(1)),
      worstHealthMs: Math.round(worstHealth),
      healthPolls: polls,
      wallSeconds: Number(wall.toFixed(2)),
      outcome,
    }),
  );
}

await main();

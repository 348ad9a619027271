// What the native server holds at its peak (scripts/bench-memory.sh starts the simulators and passes their URLs):
//   (i)  a 40 MiB file stored on Zotero Storage (zotero_put_attachment with a sourceUrl this script serves on
//        loopback; zotero-sim with its storage origin), through the MCP HTTP endpoint of `serve --http`: the
//        peak resident set's rise over the idle server's, against 2× the file (80 MiB);
//   (ii) three zotero_read_attachment calls at once on a 60 MiB linked PDF (`serve --http --local` over
//        zotero-sim --local-api 10), each a different page: the peak resident set, against 300 MB.
// The peak is the kernel's (VmHWM in /proc/<pid>/status), reset just before the calls (`5` into
// /proc/<pid>/clear_refs), so it is the calls' own. Linux only. Each server is the release build and runs with
// its own token (the default of a loopback server without credentials), read from its data directory.
//
// Environment: ZOTERO_MCP_BIN, STORAGE_SIM_URL (zotero-sim with --storage-listen), LOCAL_SIM_URL (zotero-sim
// --local-api 10), LOCAL_DATA (its data directory), WORK_DIR.

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const MIB = 1024 * 1024;
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run scripts/bench-memory.sh)`);
  return value;
};
const BIN = env('ZOTERO_MCP_BIN');
const WORK = env('WORK_DIR');

/** `VmRSS`/`VmHWM` of a process, in bytes. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** Starts `zotero-mcp serve --http` on a free port with `args` and `vars`; its pid, /mcp URL and token. */
async function startServer(name, args, vars) {
  const data = join(WORK, `${name}-data`);
  const child = spawn(BIN, ['serve', '--http', '127.0.0.1:0', '--exit-after', '600', ...args], {
    env: { PATH: process.env.PATH, ZOTERO_MCP_DATA_DIR: data, ...vars },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      said += chunk;
      const found = /listening on (\S+)/.exec(said);
      if (found) resolve(found[1]);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}): ${said}`)));
  });
  const token = readFileSync(join(data, 'http-token'), 'utf8').trim();
  return { child, url, token };
}

/** One tool call over MCP's HTTP transport; the result, or a thrown error with the answer. */
async function call(server, name, args) {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'bench-memory', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const answer = await fetch(server.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(300_000),
  });
  const json = await answer.json();
  const result = json.result;
  if (answer.status !== 200 || !result || result.isError) {
    throw new Error(`${name} answered ${answer.status}: ${JSON.stringify(json).slice(0, 800)}`);
  }
  return result;
}

/** Runs `work` with the server's peak reset first; the resident set before and the peak during, in bytes. */
async function peakDuring(server, work) {
  const pid = server.child.pid;
  const before = memory(pid).rss;
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  await work();
  return { before, peak: memory(pid).peak };
}

const mib = (bytes) => (bytes / MIB).toFixed(1);

/** (i) A 40 MiB upload to Zotero Storage. */
async function upload() {
  const size = 40 * MIB;
  const file = Buffer.alloc(size, 0x20);
  file.write('%PDF-1.4\n', 0);
  const files = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(size) });
    response.end(file);
  });
  await new Promise((resolve) => files.listen(0, '127.0.0.1', resolve));
  const sourceUrl = `http://127.0.0.1:${files.address().port}/large.pdf`;
  const server = await startServer('upload', [], {
    ZOTERO_API_BASE: env('STORAGE_SIM_URL'),
    ZOTERO_API_KEY: 'demo',
    ZOTERO_LIBRARY_ID: '1234567',
    FILE_STORAGE: 'zotero',
    // Honoured only together with ENABLE_TEST_FIXTURES, and for requests to 127.0.0.1.
    ALLOW_LOOPBACK_SOURCE_URLS: '1',
    ENABLE_TEST_FIXTURES: '1',
  });
  try {
    // A first, small call: what starting a call costs is in the idle figure, not the upload's.
    await call(server, 'zotero_search', { query: 'protein' });
    const { before, peak } = await peakDuring(server, () =>
      call(server, 'zotero_put_attachment', { parentItemKey: 'KPDKK5UT', sourceUrl }),
    );
    const rise = peak - before;
    console.log(
      `(i)  40 MiB to Zotero Storage (zotero_put_attachment, sourceUrl): resident ${mib(before)} MiB before, ` +
        `peak ${mib(peak)} MiB, rise ${mib(rise)} MiB = ${(rise / size).toFixed(2)}× the file ` +
        `(target under 2×: ${rise < 2 * size ? 'met' : 'NOT met'})`,
    );
  } finally {
    server.child.kill();
    files.close();
  }
}

/** A valid PDF of `pages` pages plus an unreferenced stream that brings it to about `size` bytes. */
function largePdf(size, pages) {
  const objects = [];
  const kids = Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`).join(' ');
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let i = 0; i < pages; i++) {
    const text = `BT /F1 12 Tf 72 720 Td (Page ${i + 1} of a large linked file) Tj ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`);
    objects.push(`<< /Length ${text.length} >>\nstream\n${text}\nendstream`);
  }
  const padding = Math.max(0, size - 4096 * pages);
  const parts = [Buffer.from('%PDF-1.4\n')];
  const offsets = [];
  let at = parts[0].length;
  const add = (buffer) => {
    parts.push(buffer);
    at += buffer.length;
  };
  objects.forEach((text, i) => {
    offsets.push(at);
    add(Buffer.from(`${i + 1} 0 obj\n${text}\nendobj\n`));
  });
  offsets.push(at);
  add(Buffer.from(`${objects.length + 1} 0 obj\n<< /Length ${padding} >>\nstream\n`));
  add(Buffer.alloc(padding, 0x41));
  add(Buffer.from('\nendstream\nendobj\n'));
  const count = objects.length + 2;
  const xref = at;
  let table = `xref\n0 ${count}\n0000000000 65535 f \n`;
  for (const offset of offsets) table += `${String(offset).padStart(10, '0')} 00000 n \n`;
  add(Buffer.from(`${table}trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** (ii) Three reads at once of a 60 MiB linked PDF on Zotero Desktop. */
async function desktopReads() {
  const data = env('LOCAL_DATA');
  const papers = `${data}-papers`;
  mkdirSync(papers, { recursive: true });
  const pdf = largePdf(60 * MIB, 3);
  writeFileSync(join(papers, 'Field notes (linked).pdf'), pdf);
  const server = await startServer('desktop', ['--local'], {
    ZOTERO_LOCAL_URL: `${env('LOCAL_SIM_URL')}/api`,
    ZOTERO_DATA_DIR: data,
    HOME: WORK,
  });
  try {
    await call(server, 'zotero_search', { query: 'protein' });
    const { before, peak } = await peakDuring(server, () =>
      Promise.all(
        [1, 2, 3].map((page) =>
          call(server, 'zotero_read_attachment', { itemKey: 'LNKDFILE', fromPage: page, toPage: page }),
        ),
      ),
    );
    console.log(
      `(ii) three reads at once of a ${mib(pdf.length)} MiB linked PDF (serve --http --local): resident ` +
        `${mib(before)} MiB before, peak ${mib(peak)} MiB = ${(peak / 1e6).toFixed(0)} MB ` +
        `(target under 300 MB: ${peak < 300e6 ? 'met' : 'NOT met'})`,
    );
  } finally {
    server.child.kill();
  }
}

await upload();
await desktopReads();

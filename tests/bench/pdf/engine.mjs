// Our PDF engine as wasm in Node's V8, for `make bench-pdf` (scripts/bench-pdf.sh): one process per file and
// mode, like the pdf.js baseline, so each figure starts from a fresh instance. Prints one JSON line.
//
//   node engine.mjs <module dir> full    <pdf> <out.json>        text of every page, size gate lifted, twice
//   node engine.mjs <module dir> gate    <pdf>                   what the Worker would answer (limits as deployed)
//   node engine.mjs <module dir> range   <pdf> <from> <to>       pages from..to, limits as deployed
//   node engine.mjs <module dir> outline <pdf>                   outline entries
//   node engine.mjs <module dir> locate  <pdf> <quotes.json> <out.json>
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [dir, mode, file, a, b] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const name = path.basename(path.resolve(dir));
const engine = require(path.resolve(dir, `${name}.js`));
const ms = () => Number(process.hrtime.bigint()) / 1e6;
const bytes = new Uint8Array(fs.readFileSync(file));
const res = { status: 'ok' };

const call = (fn) => {
  const t0 = ms();
  const reply = JSON.parse(fn());
  return { ms: ms() - t0, reply };
};

try {
  if (mode === 'full') {
    const cold = call(() => engine.text(bytes, 1, 0, false));
    res.status = cold.reply.status;
    res.total_ms = cold.ms;
    res.mem_bytes = engine.memory_bytes();
    if (cold.reply.status === 'ok') {
      res.npages = cold.reply.result.length;
      fs.writeFileSync(a, JSON.stringify(cold.reply.result));
      res.warm_total_ms = call(() => engine.text(bytes, 1, 0, false)).ms;
    } else {
      res.message = cold.reply.message;
    }
  } else if (mode === 'gate') {
    const r = call(() => engine.text(bytes, 1, 0, true));
    res.status = r.reply.status;
    res.message = r.reply.message;
    res.total_ms = r.ms;
    res.mem_bytes = engine.memory_bytes();
  } else if (mode === 'range') {
    const r = call(() => engine.text(bytes, +a, +b, true));
    res.status = r.reply.status;
    res.total_ms = r.ms;
    res.chars = r.reply.status === 'ok' ? r.reply.result.reduce((n, t) => n + t.length, 0) : 0;
    res.mem_bytes = engine.memory_bytes();
  } else if (mode === 'outline') {
    const r = call(() => engine.outline_count(bytes, false));
    res.status = r.reply.status;
    res.count = r.reply.result ?? null;
    res.total_ms = r.ms;
  } else if (mode === 'locate') {
    const r = call(() => engine.locate(bytes, fs.readFileSync(a, 'utf8'), false));
    res.status = r.reply.status;
    res.total_ms = r.ms;
    fs.writeFileSync(b, JSON.stringify(r.reply.result ?? []));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (e) {
  // A trap (unreachable, out of bounds, out of memory) lands here: the crash the engine must never have.
  res.status = 'crash';
  res.message = String((e && e.message) || e).slice(0, 300);
}
console.log(JSON.stringify(res));

// What the TypeScript server's PDF engine (pdf.js through npm unpdf, as it uses it) costs for pages from..to of
// a file already in memory: the engine alone, without the download and unzip both servers do first. A fresh
// process per run, so "cold" includes loading pdf.js, as the first read in a new isolate would. Prints one JSON
// line: { cold_ms, warm_ms, rss_mb, chars }.
//
//   node tests/bench/pdfjs-range.mjs <pdf> <from> <to>
import fs from 'node:fs';

const [file, from, to] = process.argv.slice(2);
const ms = () => Number(process.hrtime.bigint()) / 1e6;

async function readPages(bytes) {
  const { getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(bytes);
  let chars = 0;
  for (let n = Number(from); n <= Math.min(Number(to), pdf.numPages); n++) {
    const page = await pdf.getPage(n);
    const content = await page.getTextContent();
    chars += content.items.reduce((sum, item) => sum + (item.str?.length ?? 0), 0);
  }
  await pdf.destroy?.();
  return chars;
}

const data = fs.readFileSync(file);
let t0 = ms();
const chars = await readPages(new Uint8Array(data));
const cold = ms() - t0;
t0 = ms();
await readPages(new Uint8Array(data));
const warm = ms() - t0;
console.log(JSON.stringify({ cold_ms: +cold.toFixed(1), warm_ms: +warm.toFixed(1), rss_mb: +(process.memoryUsage().rss / 2 ** 20).toFixed(0), chars }));

// Checks what `zotero-mcp e2e --write --json` reported for a run with a Zotero failure injected mid-cycle
// (scripts/e2e.sh arms it through `zotero-sim --control`), and that the library holds nothing of that run:
//   node tests/e2e/cli-e2e-check.mjs <exit status> <report.json> <failed step>
// The step named must have failed, the run must have exited 1, every clean-up action must have passed, and the
// scratch item and its attachment must be gone from the simulator (permanently, not in the trash) and from WebDAV,
// with no item left under the scratch tag. Not a test file: `node --test` runs only *.test.mjs. Needs SIM_URL,
// and WEBDAV_URL/WEBDAV_USERNAME/WEBDAV_PASSWORD for the WebDAV check.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const [status, reportPath, failedStep] = process.argv.slice(2);
const TAG = 'zotero-mcp-e2e';
const LIBRARY = `${process.env.SIM_URL}/users/1234567`;
const zotero = (path) => fetch(`${LIBRARY}${path}`, { headers: { 'zotero-api-key': 'demo' } });

async function main() {
  assert.equal(Number(status), 1, `exit status ${status}, expected 1 (a failed step)`);
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  const failed = report.steps.filter((s) => s.outcome === 'failed').map((s) => s.name);
  assert.deepEqual(failed, [failedStep], `failed steps: ${JSON.stringify(failed)}`);
  const step = report.steps.find((s) => s.name === failedStep);
  assert.match(step.detail, /500|injected/, `the failure names Zotero's answer: ${step.detail}`);
  assert.ok(step.fix, 'the failed step says what to do');
  const after = report.steps.slice(report.steps.indexOf(step) + 1);
  assert.ok(after.length > 0 && after.every((s) => s.outcome === 'skipped'), 'the steps after it were skipped');
  assert.equal(report.summary.ok, false);

  const { item, attachment } = report.scratch;
  assert.ok(item && attachment, `the run created an item and an attachment: ${JSON.stringify(report.scratch)}`);
  const cleanup = report.cleanup.map((s) => [s.name, s.ok]);
  assert.deepEqual(cleanup, [
    [`cleanup: delete attachment ${attachment}`, true],
    [`cleanup: delete item ${item}`, true],
  ]);

  for (const key of [attachment, item]) {
    const res = await zotero(`/items/${key}`);
    assert.equal(res.status, 404, `${key} is still in the library (HTTP ${res.status}): ${await res.text()}`);
  }
  const tagged = await (await zotero(`/items?tag=${TAG}&includeTrashed=1&format=keys`)).text();
  assert.equal(tagged.trim(), '', `items tagged ${TAG} are left: ${tagged}`);
  if (process.env.WEBDAV_URL) {
    const auth = Buffer.from(`${process.env.WEBDAV_USERNAME}:${process.env.WEBDAV_PASSWORD}`).toString('base64');
    for (const file of [`${attachment}.zip`, `${attachment}.prop`]) {
      const res = await fetch(new URL(`zotero/${file}`, process.env.WEBDAV_URL), {
        method: 'HEAD',
        headers: { authorization: `Basic ${auth}` },
      });
      assert.equal(res.status, 404, `zotero/${file} is still on WebDAV (HTTP ${res.status})`);
    }
  }
  console.log(`ok - ${failedStep} failed as injected; ${item} and ${attachment} (with its files) were removed`);
}

main().catch((error) => {
  console.log(`not ok - ${error.message.split('\n')[0]}`);
  process.exit(1);
});

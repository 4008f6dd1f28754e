/**
 * `npm test`: the whole suite (vitest) on a PostgreSQL of its own, then one closing line
 * "N passed, N failed" that CI reads, after the ten slowest files (where the suite's time goes). Arguments are passed to vitest (`npm test -- packages/jobs`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const results = path.resolve('.beton/test-results.json');
mkdirSync(path.dirname(results), { recursive: true });
rmSync(results, { force: true });
const vitest = path.resolve('node_modules/vitest/vitest.mjs');
const run = spawnSync(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${results}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
let passed = 0;
let failed = 0;
let skipped = 0;
let failedFiles = 0;
let slowest: Array<{ file: string; ms: number }> = [];
try {
  const report = JSON.parse(readFileSync(results, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults: Array<{ name: string; status: string; message?: string; startTime?: number; endTime?: number; assertionResults: Array<{ status: string }> }>;
  };
  slowest = report.testResults
    .map((f) => ({ file: path.relative(process.cwd(), f.name), ms: (f.endTime ?? 0) - (f.startTime ?? 0) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10);
  passed = report.numPassedTests;
  skipped = report.numPendingTests + report.numTodoTests;
  failed = report.numFailedTests;
  // A file can fail without a failed test of its own: it did not load, or a hook (beforeAll /
  // afterAll) failed and its tests were skipped. Every such file counts as one more failure.
  for (const file of report.testResults.filter((f) => f.status === 'failed')) {
    failedFiles++;
    if (!file.assertionResults.some((a) => a.status === 'failed')) failed++;
  }
} catch {
  failed = Math.max(failed, 1);
}
const code = run.status ?? 1;
// Never "0 failed" on a failing run: a non-zero vitest exit with nothing counted is a failure too.
if (code !== 0 && failed === 0) failed = 1;
if (slowest.length) {
  console.log(`\nSlowest ${slowest.length} files:`);
  for (const { file, ms } of slowest) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
}
const files = failedFiles ? ` (${failedFiles} file${failedFiles === 1 ? '' : 's'} failed)` : '';
console.log(`\n${passed} passed, ${failed} failed${files}${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code !== 0 ? code : failed > 0 ? 1 : 0);

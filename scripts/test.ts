/**
 * `npm test`: the whole suite (vitest) on a PostgreSQL of its own, then one closing line
 * "N passed, N failed" that CI reads. Arguments are passed to vitest (`npm test -- packages/jobs`).
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
try {
  const report = JSON.parse(readFileSync(results, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults: Array<{ status: string; assertionResults: unknown[] }>;
  };
  passed = report.numPassedTests;
  // A test file that fails to load has no test results of its own: count it as a failure.
  const brokenFiles = report.testResults.filter((f) => f.status === 'failed' && f.assertionResults.length === 0).length;
  failed = report.numFailedTests + brokenFiles;
  skipped = report.numPendingTests + report.numTodoTests;
} catch {
  failed = Math.max(failed, 1);
}
const code = run.status ?? 1;
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code !== 0 ? code : failed > 0 ? 1 : 0);

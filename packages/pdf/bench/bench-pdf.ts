/**
 * Salary slip rendering benchmark, one thread.
 *
 *   npm run bench:pdf [-- --slips 300 --warmup 100 --json]
 *
 * Slips vary like a real payroll: every slip has its own amounts, month and
 * employee code, and a Bengali/Latin name drawn from pools of common name
 * words (so words repeat across employees, as they do in a company). A second
 * pass gives every slip a never-seen Bengali name, the worst case for the
 * shaping cache. With --json the last line is
 * {"pdfMedianMs":..,"pdfP99Ms":..,"slipsPerSecondPerCore":..,"bytes":..,"coldNameMedianMs":..,"cpuMedianMs":..,
 *  "encryptedMedianMs":..,"encryptedCpuMedianMs":..}
 * (times in ms per slip, wall clock unless named cpu; bytes per PDF).
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import type { SlipRenderer } from '../src/index.ts';
import { compileWasmWithLiftoffOnly } from '../src/wasm-tier.ts';

// As the worker's render threads do, before HarfBuzz is compiled.
compileWasmWithLiftoffOnly();
const { createSlipRenderer } = await import('../src/index.ts');
const { slip } = await import('./slips.ts');
const { encryptPdf } = await import('../src/encrypt.ts');

const { values: args } = parseArgs({
  options: {
    slips: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const SLIPS = Number(args.slips);
const WARMUP = Number(args.warmup);

async function measure(renderer: SlipRenderer, from: number, count: number, coldName: boolean, password?: string) {
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let bytes = 0;
  for (let i = from; i < from + count; i++) {
    const data = slip(i, coldName);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const rendered = await renderer.render(data);
    // Protected slips (issue 22): the encryption step after the render, as the render thread runs it.
    const pdf = password ? await encryptPdf(rendered, password) : rendered;
    const cpu = process.cpuUsage(cpu0);
    times.push(performance.now() - t0);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
    bytes += pdf.length;
  }
  const quantile = (list: number[], q: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))] ?? Number.NaN;
  return {
    median: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    cpuMedian: quantile(cpuTimes, 0.5),
    bytes: bytes / count,
  };
}

const t0 = performance.now();
const renderer = createSlipRenderer();
const setupMs = performance.now() - t0;
await measure(renderer, 0, WARMUP, false);
const layoutsBefore = renderer.stats.shaped;
const warm = await measure(renderer, WARMUP, SLIPS, false);
const layoutsWarm = renderer.stats.shaped - layoutsBefore;
const cold = await measure(renderer, 1_000_000, Math.min(SLIPS, 200), true);
const encrypted = await measure(renderer, WARMUP, Math.min(SLIPS, 100), false, '05031990');

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const result = {
  pdfMedianMs: round(warm.median),
  pdfP99Ms: round(warm.p99),
  slipsPerSecondPerCore: round(1000 / warm.mean, 1),
  bytes: Math.round(warm.bytes),
  coldNameMedianMs: round(cold.median),
  cpuMedianMs: round(warm.cpuMedian),
  /** A password-protected slip: render + AES-256 encryption (packages/pdf/src/encrypt.ts). */
  encryptedMedianMs: round(encrypted.median),
  encryptedCpuMedianMs: round(encrypted.cpuMedian),
};

console.log(`@beton/pdf slip benchmark: ${SLIPS} slips after ${WARMUP} warmup, one thread (${availableParallelism()} cores seen)`);
console.log(`  renderer setup (font parse + constant labels): ${setupMs.toFixed(0)} ms, once per worker`);
console.log(`  median ${result.pdfMedianMs} ms, p99 ${result.pdfP99Ms} ms, mean ${round(warm.mean)} ms per slip (wall clock)`);
console.log(`  median CPU time ${result.cpuMedianMs} ms per slip (process CPU: less sensitive to other load on the machine)`);
console.log(`  ${result.slipsPerSecondPerCore} slips/s per core, ${result.bytes} bytes per PDF`);
console.log(`  HarfBuzz shaping calls (cache misses) during the measured run: ${layoutsWarm}`);
console.log(`  never-seen Bengali name on every slip: median ${result.coldNameMedianMs} ms, p99 ${round(cold.p99)} ms`);
console.log(`  password-protected (render + AES-256): median ${result.encryptedMedianMs} ms, CPU ${result.encryptedCpuMedianMs} ms per slip`);
if (args.json) console.log(JSON.stringify(result));

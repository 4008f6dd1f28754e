/**
 * Memory of the render threads as production runs them: the worker's own render pool
 * (apps/worker/src/render-pool.ts, with its heap bounds), warmed up like the worker does,
 * then slips through it, half with never-seen Bengali names. Run it with the worker's
 * process settings:
 *
 *   MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=2 npx tsx packages/pdf/bench/bench-thread-rss.ts [--threads 2 --slips 3000 --json]
 *
 * Prints the process RSS before the threads start, after the warm-up and at its peak
 * (sampled every 50 ms), and what the threads add per thread; with --json the last line is
 * {"threads":..,"baseRssMb":..,"warmRssMb":..,"peakRssMb":..,"peakPerThreadMb":..,"seconds":..}.
 */
import { parseArgs } from 'node:util';
import { createRenderPool } from '../../../apps/worker/src/render-pool.ts';
import { slip } from './slips.ts';

const { values: args } = parseArgs({
  options: {
    threads: { type: 'string', default: '2' },
    slips: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const THREADS = Number(args.threads);
const SLIPS = Number(args.slips);

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const baseRss = process.memoryUsage.rss();
let peakRss = baseRss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 50);

const pool = createRenderPool(THREADS);
await pool.warmUp(Number(args.warmup));
const warmRss = process.memoryUsage.rss();
const started = performance.now();
let next = 0;
const controller = new AbortController();
await Promise.all(
  Array.from({ length: THREADS * 2 }, async () => {
    while (next < SLIPS) {
      const i = next++;
      await pool.render(slip(i, i % 2 === 1), { signal: controller.signal });
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
peakRss = Math.max(peakRss, process.memoryUsage.rss());
clearInterval(sampler);
await pool.close();

const result = {
  threads: THREADS,
  baseRssMb: mb(baseRss),
  warmRssMb: mb(warmRss),
  peakRssMb: mb(peakRss),
  peakPerThreadMb: mb((peakRss - baseRss) / THREADS),
  seconds: Math.round(seconds * 10) / 10,
};
console.log(`render threads: ${THREADS}, ${SLIPS} slips (half with never-seen Bengali names) in ${result.seconds} s`);
console.log(`  process RSS: ${result.baseRssMb} MB before the threads, ${result.warmRssMb} MB warmed up, peak ${result.peakRssMb} MB`);
console.log(`  the threads add ${result.peakPerThreadMb} MB each at the peak`);
if (args.json) console.log(JSON.stringify(result));

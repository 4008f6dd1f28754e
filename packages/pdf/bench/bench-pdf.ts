/**
 * Salary slip rendering benchmark, one thread.
 *
 *   npm run bench:pdf [-- --slips 300 --warmup 100 --baseline <git ref> --json]
 *
 * Slips vary like a real payroll: every slip has its own amounts, month and
 * employee code, and a Bengali/Latin name drawn from pools of common name
 * words (so words repeat across employees, as they do in a company). A second
 * pass gives every slip a never-seen Bengali name, the worst case for the
 * shaping cache.
 *
 * With --baseline, the renderer of that commit (a full or abbreviated commit id, a branch or a
 * tag; its packages/pdf/src read from the repository with isomorphic-git, no `git` program
 * needed, into node_modules/.cache/beton-pdf-baseline/<commit>/ so it loads the same dependencies)
 * renders the same slips in the same process, alternating slip by slip with today's (the
 * machine's load then weighs on both alike), and both are printed with their ratio.
 *
 * With --json the last line is
 * {"pdfMedianMs":..,"pdfP99Ms":..,"slipsPerSecondPerCore":..,"bytes":..,"coldNameMedianMs":..,"cpuMedianMs":..,
 *  "encryptedMedianMs":..,"encryptedCpuMedianMs":..[,"baseline":{"commit":..,"pdfMedianMs":..,"cpuMedianMs":..,"bytes":..,
 *  "coldNameMedianMs":..},"medianRatio":..,"cpuMedianRatio":..]}
 * (times in ms per slip, wall clock unless named cpu; bytes per PDF; ratios today / baseline).
 */
import fs, { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import git from 'isomorphic-git';
import { parseArgs } from 'node:util';
import type { SlipData, SlipRenderer } from '../src/index.ts';
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
    baseline: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const SLIPS = Number(args.slips);
const WARMUP = Number(args.warmup);

/** `ref` as a commit id: a branch, a tag, a full or an abbreviated commit id. */
async function resolveCommit(dir: string, ref: string): Promise<string> {
  try {
    return await git.resolveRef({ fs, dir, ref });
  } catch {
    if (!/^[0-9a-f]{4,40}$/i.test(ref)) throw new Error(`--baseline ${ref}: no such branch, tag or commit`);
    try {
      return await git.expandOid({ fs, dir, oid: ref.toLowerCase() });
    } catch (error) {
      throw new Error(`--baseline ${ref}: no such commit (${(error as Error).message})`, { cause: error });
    }
  }
}

/** Writes the files under `prefix` of `commit`'s tree into `target`, keeping their paths. */
async function checkoutPaths(root: string, commit: string, prefixes: string[], target: string): Promise<void> {
  await git.walk({
    fs,
    dir: root,
    trees: [git.TREE({ ref: commit })],
    map: async (filepath, [entry]) => {
      if (!entry || filepath === '.') return true;
      const inside = prefixes.some((p) => filepath === p || filepath.startsWith(`${p}/`));
      const above = prefixes.some((p) => p.startsWith(`${filepath}/`));
      if (!inside && !above) return null; // skip this subtree
      if ((await entry.type()) === 'blob' && inside) {
        const file = join(target, filepath);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, (await entry.content())!);
      }
      return true;
    },
  });
}

/** The renderer of `ref` (a commit, tag or branch), from a copy of its source. */
async function baselineRenderer(ref: string): Promise<{ commit: string; renderer: SlipRenderer }> {
  const root = await git.findRoot({ fs, filepath: import.meta.dirname });
  const commit = await resolveCommit(root, ref);
  const dir = join(root, 'node_modules', '.cache', 'beton-pdf-baseline', commit);
  if (!existsSync(join(dir, 'packages', 'pdf', 'src', 'index.ts'))) {
    const partial = `${dir}.partial-${process.pid}`;
    mkdirSync(partial, { recursive: true });
    await checkoutPaths(root, commit, ['packages/pdf/src', 'packages/pdf/package.json'], partial);
    renameSync(partial, dir);
  }
  const module = (await import(join(dir, 'packages', 'pdf', 'src', 'index.ts'))) as { createSlipRenderer: () => SlipRenderer };
  return { commit, renderer: module.createSlipRenderer() };
}

interface Stats {
  median: number;
  p99: number;
  mean: number;
  cpuMedian: number;
  bytes: number;
}

/**
 * Renders slips `from`..`from + count` with each renderer, alternating renderers slip by slip
 * (and which goes first), and returns each one's figures.
 */
async function measure(renderers: SlipRenderer[], from: number, count: number, coldName: boolean, password?: string): Promise<Stats[]> {
  const times = renderers.map(() => [] as number[]);
  const cpuTimes = renderers.map(() => [] as number[]);
  const bytes = renderers.map(() => 0);
  const one = async (r: number, data: SlipData) => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const rendered = await (renderers[r] as SlipRenderer).render(data);
    // Protected slips: the encryption step after the render, as the render thread runs it.
    const pdf = password ? await encryptPdf(rendered, password) : rendered;
    const cpu = process.cpuUsage(cpu0);
    (times[r] as number[]).push(performance.now() - t0);
    (cpuTimes[r] as number[]).push((cpu.user + cpu.system) / 1000);
    bytes[r] = (bytes[r] as number) + pdf.length;
  };
  for (let i = from; i < from + count; i++) {
    const data = slip(i, coldName);
    for (let k = 0; k < renderers.length; k++) await one((i + k) % renderers.length, data);
  }
  const quantile = (list: number[], q: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))] ?? Number.NaN;
  return renderers.map((_, r) => {
    const t = times[r] as number[];
    return {
      median: quantile(t, 0.5),
      p99: quantile(t, 0.99),
      mean: t.reduce((a, b) => a + b, 0) / t.length,
      cpuMedian: quantile(cpuTimes[r] as number[], 0.5),
      bytes: (bytes[r] as number) / count,
    };
  });
}

const t0 = performance.now();
const renderer = createSlipRenderer();
const setupMs = performance.now() - t0;
const baseline = args.baseline
  ? await baselineRenderer(args.baseline).catch((error: unknown) => {
      console.error(`bench:pdf: ${(error as Error).message}`);
      process.exit(2);
    })
  : undefined;
const renderers = baseline ? [renderer, baseline.renderer] : [renderer];
await measure(renderers, 0, WARMUP, false);
const layoutsBefore = renderer.stats.shaped;
const [warm, warmBase] = await measure(renderers, WARMUP, SLIPS, false);
const layoutsWarm = renderer.stats.shaped - layoutsBefore;
const [cold, coldBase] = await measure(renderers, 1_000_000, Math.min(SLIPS, 200), true);
const [encrypted] = await measure([renderer], WARMUP, Math.min(SLIPS, 100), false, '05031990');
if (!warm || !cold || !encrypted) throw new Error('nothing measured');

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
  ...(baseline && warmBase && coldBase
    ? {
        baseline: {
          commit: baseline.commit,
          pdfMedianMs: round(warmBase.median),
          cpuMedianMs: round(warmBase.cpuMedian),
          bytes: Math.round(warmBase.bytes),
          coldNameMedianMs: round(coldBase.median),
        },
        medianRatio: round(warm.median / warmBase.median, 3),
        cpuMedianRatio: round(warm.cpuMedian / warmBase.cpuMedian, 3),
      }
    : {}),
};

console.log(`@beton/pdf slip benchmark: ${SLIPS} slips after ${WARMUP} warmup, one thread (${availableParallelism()} cores seen)`);
console.log(`  renderer setup (font parse + constant labels): ${setupMs.toFixed(0)} ms, once per worker`);
console.log(`  median ${result.pdfMedianMs} ms, p99 ${result.pdfP99Ms} ms, mean ${round(warm.mean)} ms per slip (wall clock)`);
console.log(`  median CPU time ${result.cpuMedianMs} ms per slip (process CPU: less sensitive to other load on the machine)`);
console.log(`  ${result.slipsPerSecondPerCore} slips/s per core, ${result.bytes} bytes per PDF`);
console.log(`  HarfBuzz shaping calls (cache misses) during the measured run: ${layoutsWarm}`);
console.log(`  never-seen Bengali name on every slip: median ${result.coldNameMedianMs} ms, p99 ${round(cold.p99)} ms`);
console.log(`  password-protected (render + AES-256): median ${result.encryptedMedianMs} ms, CPU ${result.encryptedCpuMedianMs} ms per slip`);
if (baseline && warmBase && coldBase) {
  console.log(
    `  baseline ${baseline.commit.slice(0, 10)} on the same slips, alternating: median ${round(warmBase.median)} ms, CPU ${round(warmBase.cpuMedian)} ms,`,
  );
  console.log(`    ${Math.round(warmBase.bytes)} bytes per PDF, never-seen name ${round(coldBase.median)} ms`);
  console.log(`  today / baseline: median x${result.medianRatio}, CPU median x${result.cpuMedianRatio}, bytes x${round(warm.bytes / warmBase.bytes, 3)}`);
}
if (args.json) console.log(JSON.stringify(result));

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
 * {"pdfMedianMs":..,"pdfP99Ms":..,"slipsPerSecondPerCore":..,"bytes":..,"coldNameMedianMs":..,"cpuMedianMs":..}
 * (times in ms per slip, wall clock unless named cpu; bytes per PDF).
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { createSlipRenderer, sampleSlip } from '../src/index.ts';
import type { SlipData, SlipRenderer } from '../src/index.ts';

const { values: args } = parseArgs({
  options: {
    slips: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const SLIPS = Number(args.slips);
const WARMUP = Number(args.warmup);

const GIVEN: Array<[string, string]> = [
  ['Mohammad', 'মোহাম্মদ'], ['Abdul', 'আব্দুল'], ['Nusrat', 'নুসরাত'], ['Farhana', 'ফারহানা'],
  ['Tanvir', 'তানভীর'], ['Sakib', 'সাকিব'], ['Arpita', 'অর্পিতা'], ['Sharmila', 'শর্মিলা'],
  ['Rakib', 'রাকিব'], ['Mahmud', 'মাহমুদ'], ['Jannatul', 'জান্নাতুল'], ['Ferdous', 'ফেরদৌস'],
  ['Sumaiya', 'সুমাইয়া'], ['Imran', 'ইমরান'], ['Taslima', 'তাসলিমা'], ['Priyanka', 'প্রিয়াঙ্কা'],
  ['Dipankar', 'দীপঙ্কর'], ['Soumitra', 'সৌমিত্র'], ['Krishna', 'কৃষ্ণ'], ['Shakti', 'শক্তি'],
];
const FAMILY: Array<[string, string]> = [
  ['Chowdhury', 'চৌধুরী'], ['Rahman', 'রহমান'], ['Hossain', 'হোসেন'], ['Akter', 'আক্তার'],
  ['Islam', 'ইসলাম'], ['Sarkar', 'সরকার'], ['Bhattacharya', 'ভট্টাচার্য'], ['Chakraborty', 'চক্রবর্তী'],
  ['Das', 'দাস'], ['Majumder', 'মজুমদার'], ['Khatun', 'খাতুন'], ['Talukder', 'তালুকদার'],
];
const CONSONANTS = ['ক', 'খ', 'গ', 'চ', 'জ', 'ত', 'দ', 'ন', 'প', 'ব', 'ম', 'র', 'ল', 'শ', 'স', 'হ', 'ন্ত', 'র্ম', 'স্ব', 'ক্ষ', 'প্র'];
const VOWEL_SIGNS = ['', 'া', 'ি', 'ী', 'ু', 'ে', 'ো', 'ৌ'];

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length] as T;
}

/** A Bengali word no slip has used before (for the cold-cache pass). */
function freshWord(i: number): string {
  let word = '';
  let n = i + 1;
  while (n > 0) {
    word += pick(CONSONANTS, n) + pick(VOWEL_SIGNS, Math.floor(n / CONSONANTS.length));
    n = Math.floor(n / (CONSONANTS.length * VOWEL_SIGNS.length));
  }
  return `${word}র্থী`;
}

function slip(i: number, coldName: boolean): SlipData {
  const given = pick(GIVEN, i * 7);
  const family = pick(FAMILY, i * 5 + 3);
  const basic = 18_000 + ((i * 7919) % 60_000);
  const earnings = sampleSlip().earnings.map((line, k) => ({
    ...line,
    amount: k === 0 ? basic : Math.round(basic * (0.05 + 0.1 * k) * 100) / 100,
  }));
  return sampleSlip({
    month: `2026-${String((i % 12) + 1).padStart(2, '0')}`,
    employee: {
      code: `EMP-${10_000 + i}`,
      nameLatin: `${given[0]} ${family[0]}`,
      nameBengali: coldName ? `${given[1]} ${freshWord(i)}` : `${given[1]} ${family[1]}`,
      email: `${given[0].toLowerCase()}.${family[0].toLowerCase()}${i}@example.com`,
    },
    earnings,
  });
}

async function measure(renderer: SlipRenderer, from: number, count: number, coldName: boolean) {
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let bytes = 0;
  for (let i = from; i < from + count; i++) {
    const data = slip(i, coldName);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const pdf = await renderer.render(data);
    const cpu = process.cpuUsage(cpu0);
    times.push(performance.now() - t0);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
    bytes += pdf.length;
  }
  const quantile = (list: number[], q: number) =>
    [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))] ?? Number.NaN;
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
const layoutsBefore = renderer.stats.fontkitLayouts;
const warm = await measure(renderer, WARMUP, SLIPS, false);
const layoutsWarm = renderer.stats.fontkitLayouts - layoutsBefore;
const cold = await measure(renderer, 1_000_000, Math.min(SLIPS, 200), true);

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const result = {
  pdfMedianMs: round(warm.median),
  pdfP99Ms: round(warm.p99),
  slipsPerSecondPerCore: round(1000 / warm.mean, 1),
  bytes: Math.round(warm.bytes),
  coldNameMedianMs: round(cold.median),
  cpuMedianMs: round(warm.cpuMedian),
};

console.log(`@beton/pdf slip benchmark: ${SLIPS} slips after ${WARMUP} warmup, one thread (${availableParallelism()} cores seen)`);
console.log(`  renderer setup (font parse + constant labels): ${setupMs.toFixed(0)} ms, once per worker`);
console.log(`  median ${result.pdfMedianMs} ms, p99 ${result.pdfP99Ms} ms, mean ${round(warm.mean)} ms per slip (wall clock)`);
console.log(`  median CPU time ${result.cpuMedianMs} ms per slip (process CPU: less sensitive to other load on the machine)`);
console.log(`  ${result.slipsPerSecondPerCore} slips/s per core, ${result.bytes} bytes per PDF`);
console.log(`  fontkit shaping calls during the measured run: ${layoutsWarm}`);
console.log(`  never-seen Bengali name on every slip: median ${result.coldNameMedianMs} ms, p99 ${round(cold.p99)} ms`);
if (args.json) console.log(JSON.stringify(result));

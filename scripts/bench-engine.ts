/**
 * `npm run bench:engine -- [--jobs 20000] [--concurrency 24] [--local-queue 500] [--profile] [--json]`
 *
 * Tracked no-op jobs per second through the whole Beton engine (enqueueMany: jobs rows +
 * graphile wake-ups; startWorker: claim, attempt row, status done) side by side with raw
 * graphile-worker (addJobs + run() with localQueue and batched completion) on the same fresh
 * database in the same run. Rate = N / (enqueue + drain), both sides measured the same way,
 * both fetching `--local-queue` jobs at a time (the workload and both sides: scripts/lib/queue-peers/;
 * `npm run bench:peers` adds BullMQ and pg-boss). 20,000 jobs by default: raw graphile-worker
 * runs 5,000 in ~0.2 s, too short a time to measure against 100 ms polls.
 * Target (issue 3): ratio >= 0.25. `--profile` adds where the engine's time goes: SQL round
 * trips per job, grouped by statement, with their total and mean time.
 */
import { parseArgs } from 'node:util';
import { installSqlProfile } from './lib/sql-profile.ts';
import { openScratchDatabase } from '../apps/worker/src/cli/database.ts';
import { runBetonEngine } from './lib/queue-peers/beton-engine.ts';
import { runGraphileWorker } from './lib/queue-peers/graphile-worker.ts';
import { fmt, type PeerResult, type Workload } from './lib/queue-peers/workload.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '24' },
    'local-queue': { type: 'string', default: '500' },
    profile: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('Usage: npm run bench:engine -- [--jobs 20000] [--concurrency 24] [--local-queue 500] [--profile] [--json]');
  process.exit(0);
}
const N = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const LOCAL_QUEUE = Number(values['local-queue']);
if (![N, CONCURRENCY, LOCAL_QUEUE].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error('bench:engine: --jobs, --concurrency and --local-queue must be whole numbers >= 1');
  process.exit(2);
}
const log = (line: string) => process.stderr.write(`${line}\n`);
const workload: Workload = { jobs: N, concurrency: CONCURRENCY, localQueue: LOCAL_QUEUE, log };

// Optional SQL profile: every query of this process, grouped by statement.
const sql = values.profile ? installSqlProfile() : undefined;

async function main() {
  const db = await openScratchDatabase('engine', { log });
  let engine: PeerResult;
  let raw: PeerResult;
  try {
    log(`Beton engine: ${fmt(N)} tracked no-op jobs`);
    engine = await runBetonEngine(db.url, workload, sql ? { sql } : {});
    log(`Raw graphile-worker: ${fmt(N)} no-op jobs`);
    raw = await runGraphileWorker(db.url, workload);
  } finally {
    await db.dispose();
  }
  const ratio = engine.jobsPerSecond / raw.jobsPerSecond;
  const row = (name: string, r: PeerResult) =>
    `${name.padEnd(22)} ${fmt(r.jobsPerSecond).padStart(8)} jobs/s   (enqueue ${r.enqueueSeconds.toFixed(2)} s + run ${r.drainSeconds.toFixed(2)} s; run alone ${fmt(N / r.drainSeconds)} jobs/s)`;
  console.log('');
  console.log(`bench:engine — ${fmt(N)} no-op jobs, concurrency ${CONCURRENCY}, local queue ${LOCAL_QUEUE}, same fresh database`);
  console.log(row('Beton engine (tracked)', engine));
  console.log(row('raw graphile-worker', raw));
  console.log(`ratio ${ratio.toFixed(3)} (target >= 0.25: ${ratio >= 0.25 ? 'met' : 'MISSED'})`);
  if (values.profile) {
    const entries = [...sql!.stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
    const calls = entries.reduce((n, [, s]) => n + s.calls, 0);
    console.log('');
    console.log(`Engine SQL profile (enqueue + run): ${fmt(calls)} statements = ${(calls / N).toFixed(1)} per job`);
    console.log(`${'calls'.padStart(8)} ${'per job'.padStart(7)} ${'total s'.padStart(8)} ${'mean ms'.padStart(8)}  statement`);
    for (const [sql, s] of entries.slice(0, 14)) {
      console.log(
        `${fmt(s.calls).padStart(8)} ${(s.calls / N).toFixed(2).padStart(7)} ${(s.ms / 1000).toFixed(2).padStart(8)} ${(s.ms / s.calls).toFixed(2).padStart(8)}  ${sql}`,
      );
    }
  }
  if (values.json) {
    console.log(
      JSON.stringify({
        trackedJobsPerSecond: Math.round(engine.jobsPerSecond),
        rawJobsPerSecond: Math.round(raw.jobsPerSecond),
        ratio: Number(ratio.toFixed(3)),
        jobs: N,
      }),
    );
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench:engine: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  },
);

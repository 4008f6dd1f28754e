/**
 * `npm run bench:engine -- [--jobs 20000] [--concurrency 24] [--local-queue 500] [--profile] [--json]`
 *
 * Tracked no-op jobs per second through the whole Beton engine (enqueueMany: jobs rows +
 * graphile wake-ups; startWorker: claim, attempt row, status done) side by side with raw
 * graphile-worker (addJobs + run() with localQueue and batched completion) on the same fresh
 * database in the same run. Rate = N / (enqueue + drain), both sides measured the same way,
 * both fetching `--local-queue` jobs at a time. 20,000 jobs by default: raw graphile-worker
 * runs 5,000 in ~0.2 s, too short a time to measure against 100 ms polls.
 * Target (issue 3): ratio >= 0.25. `--profile` adds where the engine's time goes: SQL round
 * trips per job, grouped by statement, with their total and mean time.
 */
import { createPool } from '@beton/db';
import { createJobClient, createLogger, noopJob, PostgresLimiterStore, startWorker } from '@beton/jobs';
import { makeWorkerUtils, run as runGraphile, Logger as GraphileLogger } from 'graphile-worker';
import { parseArgs } from 'node:util';
import { installSqlProfile } from './lib/sql-profile.ts';
import { openScratchDatabase } from '../apps/worker/src/cli/database.ts';
import { countWakeups } from '@beton/jobs/wakeups';

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
const POOL_MAX = CONCURRENCY + 6;
const log = (line: string) => process.stderr.write(`${line}\n`);
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

// Optional SQL profile: every query of this process, grouped by statement.
const sql = values.profile ? installSqlProfile() : undefined;

function progress(label: string, done: () => number, started: number): NodeJS.Timeout {
  return setInterval(() => log(`  ${label}: ${fmt(done())}/${fmt(N)} done · ${((performance.now() - started) / 1000).toFixed(1)} s`), 1000);
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, label: string): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`${label}: not finished after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface SideResult {
  enqueueSeconds: number;
  drainSeconds: number;
  jobsPerSecond: number;
}

/** Beton: enqueueMany(noop × N) then a maintenance worker until every jobs row is done. */
async function benchEngine(url: string): Promise<SideResult> {
  const pool = createPool({ url, max: POOL_MAX, applicationName: 'bench-engine' });
  const definitions = [noopJob] as const;
  const jobs = createJobClient(pool, definitions);
  sql?.on();
  const t0 = performance.now();
  for (let i = 0; i < N; i += 5000) {
    const items = Array.from({ length: Math.min(5000, N - i) }, (_, k) => ({ payload: { key: `bench-${i + k}` } }));
    await jobs.enqueueMany('noop', items);
  }
  const t1 = performance.now();
  log(`  enqueued ${fmt(N)} tracked jobs in ${((t1 - t0) / 1000).toFixed(2)} s; running them (concurrency ${CONCURRENCY})…`);
  let done = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  const ticker = progress('engine', () => done, t1);
  const worker = await startWorker({
    pool,
    definitions,
    handlers: { noop: async () => {} },
    queue: 'maintenance',
    concurrency: CONCURRENCY,
    limiter: new PostgresLimiterStore(pool),
    logger: createLogger({ level: 'silent' }),
    pollIntervalMs: 100,
    localQueueSize: LOCAL_QUEUE,
    events: {
      onFinish: (e) => {
        if (e.outcome === 'done' && ++done === N) resolveAll();
      },
    },
  });
  await all; // every finish transaction (status done + attempt row) has committed
  const t2 = performance.now();
  sql?.off();
  clearInterval(ticker);
  await worker.stop('benchmark over');
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from jobs where status = 'done'`);
  await pool.end(); // the backends exit: their statistics are flushed
  if (rows[0]?.n !== N) throw new Error(`engine: expected ${N} jobs done, found ${rows[0]?.n}`);
  const stats = createPool({ url, max: 1, applicationName: 'bench-engine' });
  const { rows: upd } = await stats.query<{ upd: number; hot: number }>(
    `select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'jobs'`,
  );
  await stats.end();
  log(`  jobs rows updated ${fmt(upd[0]!.upd)} times, ${fmt((100 * upd[0]!.hot) / Math.max(1, upd[0]!.upd), 1)} % in place (HOT: no index entries written)`);
  return { enqueueSeconds: (t1 - t0) / 1000, drainSeconds: (t2 - t1) / 1000, jobsPerSecond: N / ((t2 - t0) / 1000) };
}

/** Raw graphile-worker: addJobs(N) then run() with localQueue + batched complete/fail until the queue is empty. */
async function benchRaw(url: string): Promise<SideResult> {
  const pool = createPool({ url, max: POOL_MAX, applicationName: 'bench-raw' });
  const logger = new GraphileLogger(() => () => {});
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  const t0 = performance.now();
  for (let i = 0; i < N; i += 5000) {
    await utils.addJobs(Array.from({ length: Math.min(5000, N - i) }, (_, k) => ({ identifier: 'bench_raw_noop', payload: { key: `raw-${i + k}` } })));
  }
  const t1 = performance.now();
  log(
    `  added ${fmt(N)} raw graphile jobs in ${((t1 - t0) / 1000).toFixed(2)} s; running them (concurrency ${CONCURRENCY}, localQueue ${LOCAL_QUEUE}, batched completion)…`,
  );
  let done = 0;
  const ticker = progress('raw', () => done, t1);
  const runner = await runGraphile({
    pgPool: pool,
    concurrency: CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 100,
    logger,
    taskList: { bench_raw_noop: async () => void done++ },
    preset: { worker: { localQueue: { size: LOCAL_QUEUE }, completeJobBatchDelay: 10, failJobBatchDelay: 10 } },
  });
  // Done = every job ran and its completion is committed (the row is gone).
  await waitUntil(async () => done >= N && (await countWakeups(pool)) === 0, 600_000, 'raw');
  const t2 = performance.now();
  clearInterval(ticker);
  await runner.stop();
  await utils.release();
  await pool.end();
  return { enqueueSeconds: (t1 - t0) / 1000, drainSeconds: (t2 - t1) / 1000, jobsPerSecond: N / ((t2 - t0) / 1000) };
}

async function main() {
  const db = await openScratchDatabase('engine', { log });
  let engine: SideResult;
  let raw: SideResult;
  try {
    log(`Beton engine: ${fmt(N)} tracked no-op jobs`);
    engine = await benchEngine(db.url);
    log(`Raw graphile-worker: ${fmt(N)} no-op jobs`);
    raw = await benchRaw(db.url);
  } finally {
    await db.dispose();
  }
  const ratio = engine.jobsPerSecond / raw.jobsPerSecond;
  const row = (name: string, r: SideResult) =>
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

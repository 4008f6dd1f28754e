/**
 * Beton's engine under the queue benches' workload (workload.ts): `enqueueMany('noop', …)` in
 * chunks (a `jobs` row each, plus its graphile-worker wake-up), then one `startWorker` with
 * `concurrency` handlers and a local queue of `localQueue`, until every job's finish (status
 * done, attempt row, counters) has committed. What a finished job keeps: its row, one attempt
 * row per attempt, the per-queue counters. The database must be migrated (Beton's migrations
 * and the queue's).
 */
import { createPool } from '@beton/db';
import { createJobClient, createLogger, noopJob, PostgresLimiterStore, startWorker } from '@beton/jobs';
import type { SqlProfile } from '../sql-profile.ts';
import { chunks, drainTimeoutMs, fmt, progress, result, waitUntil, type PeerResult, type Workload } from './workload.ts';

export async function runBetonEngine(url: string, workload: Workload, options: { sql?: SqlProfile } = {}): Promise<PeerResult> {
  const { jobs: N, concurrency, localQueue, log } = workload;
  const pool = createPool({ url, max: concurrency + 6, applicationName: 'bench-engine' });
  const definitions = [noopJob] as const;
  const client = createJobClient(pool, definitions);
  options.sql?.on();
  const t0 = performance.now();
  for (const { start, size } of chunks(N)) {
    await client.enqueueMany(
      'noop',
      Array.from({ length: size }, (_, k) => ({ payload: { key: `bench-${start + k}` } })),
    );
  }
  const t1 = performance.now();
  log(`  enqueued ${fmt(N)} tracked jobs in ${((t1 - t0) / 1000).toFixed(2)} s; running them (concurrency ${concurrency})…`);
  let handled = 0;
  let done = 0;
  const ticker = progress(workload, 'engine', () => done, t1);
  const worker = await startWorker({
    pool,
    definitions,
    handlers: { noop: async () => void handled++ },
    queue: 'maintenance',
    concurrency,
    limiter: new PostgresLimiterStore(pool),
    logger: createLogger({ level: 'silent' }),
    pollIntervalMs: 100,
    localQueueSize: localQueue,
    events: {
      onFinish: (e) => {
        if (e.outcome === 'done') done++;
      },
    },
  });
  try {
    // Every finish transaction (status done + attempt row) has committed.
    await waitUntil(() => done >= N, drainTimeoutMs(workload), 'engine');
  } finally {
    clearInterval(ticker);
  }
  const t2 = performance.now();
  options.sql?.off();
  await worker.stop('benchmark over');
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from jobs where status = 'done'`);
  await pool.end(); // the backends exit: their statistics are flushed
  const stats = createPool({ url, max: 1, applicationName: 'bench-engine' });
  const { rows: upd } = await stats.query<{ upd: number; hot: number }>(
    `select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'jobs'`,
  );
  await stats.end();
  log(`  jobs rows updated ${fmt(upd[0]!.upd)} times, ${fmt((100 * upd[0]!.hot) / Math.max(1, upd[0]!.upd), 1)} % in place (HOT: no index entries written)`);
  return result(workload, t0, t1, t2, { handled, finished: rows[0]!.n });
}

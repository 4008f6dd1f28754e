/**
 * pg-boss under the queue benches' workload (workload.ts): `insert` in chunks, then one
 * `work()` until every job is `completed` in pg-boss's job table. Settings, the closest
 * pg-boss has to a local queue with batched completion: each fetch takes `localQueue` jobs
 * (`batchSize`), the handler runs them `concurrency` at a time and settles each job on its
 * own (`perJobResults`: one statement per batch), and a full batch is followed by the next
 * fetch at once (`burstWhenBatchFull`; otherwise the poll, 0.5 s, pg-boss's minimum). A
 * finished job keeps its row (state completed) until pg-boss's maintenance deletes it (after
 * 7 days by default). Its schema (`pgboss`) is installed on start; the rest is pg-boss's
 * defaults. One `work()` with `localConcurrency: 24` and `batchSize: 1` (24 pollers fetching
 * and completing one job per round trip) is the other way to have 24 in flight: it was slower
 * (docs/benchmarks.md).
 */
import { createPool } from '@beton/db';
import { PgBoss } from 'pg-boss';
import { chunks, drainTimeoutMs, fmt, progress, result, waitUntil, type PeerResult, type Workload } from './workload.ts';

/** Runs `fn` over `items`, at most `limit` at a time. */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export async function runPgBoss(url: string, workload: Workload): Promise<PeerResult> {
  const { jobs: N, concurrency, localQueue, log } = workload;
  const QUEUE = 'bench-noop';
  const boss = new PgBoss({ connectionString: url, max: concurrency + 6, application_name: 'bench-pg-boss' });
  boss.on('error', (error) => log(`  pg-boss: ${error.message}`));
  // Our own connection for the final count: pg-boss's job table, read as it stores it.
  const pool = createPool({ url, max: 1, applicationName: 'bench-pg-boss' });
  const completed = async () =>
    (await pool.query<{ n: number }>(`select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`, [QUEUE])).rows[0]!.n;
  try {
    await boss.start();
    await boss.createQueue(QUEUE);
    const t0 = performance.now();
    for (const { start, size } of chunks(N)) {
      await boss.insert(
        QUEUE,
        Array.from({ length: size }, (_, k) => ({ data: { key: `pg-boss-${start + k}` } })),
      );
    }
    const t1 = performance.now();
    log(`  inserted ${fmt(N)} pg-boss jobs in ${((t1 - t0) / 1000).toFixed(2)} s; running them (batches of ${localQueue}, ${concurrency} at a time)…`);
    let handled = 0;
    const ticker = progress(workload, 'pg-boss', () => handled, t1);
    await boss.work(QUEUE, { batchSize: localQueue, perJobResults: true, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 }, async (batch) => {
      await eachLimit(batch, concurrency, async () => void handled++);
      return batch.map((job) => ({ id: job.id, status: 'completed' as const }));
    });
    let finished = 0;
    try {
      // The last batch's settlement has committed: every job is completed in the table.
      await waitUntil(async () => handled >= N && (finished = await completed()) >= N, drainTimeoutMs(workload), 'pg-boss');
    } finally {
      clearInterval(ticker);
    }
    const t2 = performance.now();
    return result(workload, t0, t1, t2, { handled, finished });
  } finally {
    await boss.stop({ graceful: true, timeout: 10_000 });
    await pool.end();
  }
}

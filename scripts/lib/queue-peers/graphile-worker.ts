/**
 * Raw graphile-worker (the engine Beton runs on) under the queue benches' workload
 * (workload.ts): `addJobs` in chunks, then one `run()` with `concurrency` handlers, a local
 * queue of `localQueue` jobs and batched completion (completeJobBatchDelay / failJobBatchDelay
 * 10 ms), until every job ran and its completion committed. A finished job keeps nothing: its
 * row is deleted. graphile-worker installs its schema in the database on first use.
 */
import { createPool } from '@beton/db';
import { countWakeups } from '@beton/jobs/wakeups';
import { makeWorkerUtils, run, Logger } from 'graphile-worker';
import { chunks, drainTimeoutMs, fmt, progress, result, waitUntil, type PeerResult, type Workload } from './workload.ts';

export async function runGraphileWorker(url: string, workload: Workload): Promise<PeerResult> {
  const { jobs: N, concurrency, localQueue, log } = workload;
  const pool = createPool({ url, max: concurrency + 6, applicationName: 'bench-raw' });
  const logger = new Logger(() => () => {});
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  await utils.migrate();
  const t0 = performance.now();
  for (const { start, size } of chunks(N)) {
    await utils.addJobs(Array.from({ length: size }, (_, k) => ({ identifier: 'bench_raw_noop', payload: { key: `raw-${start + k}` } })));
  }
  const t1 = performance.now();
  log(
    `  added ${fmt(N)} raw graphile jobs in ${((t1 - t0) / 1000).toFixed(2)} s; running them (concurrency ${concurrency}, localQueue ${localQueue}, batched completion)…`,
  );
  let handled = 0;
  const ticker = progress(workload, 'raw', () => handled, t1);
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 100,
    logger,
    taskList: { bench_raw_noop: async () => void handled++ },
    preset: { worker: { localQueue: { size: localQueue }, completeJobBatchDelay: 10, failJobBatchDelay: 10 } },
  });
  // Done = every job ran and its completion is committed (graphile-worker's jobs table is empty).
  let left = N;
  try {
    await waitUntil(async () => handled >= N && (left = await countWakeups(pool)) === 0, drainTimeoutMs(workload), 'raw');
  } finally {
    clearInterval(ticker);
  }
  const t2 = performance.now();
  await runner.stop();
  await utils.release();
  await pool.end();
  // Nothing is kept: a job is finished when its row is gone.
  return result(workload, t0, t1, t2, { handled, finished: N - left });
}

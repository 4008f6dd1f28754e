/**
 * BullMQ on Redis under the queue benches' workload (workload.ts): `Queue.addBulk` in chunks,
 * then one `Worker` with `concurrency` handlers, until every job is in the completed set.
 * Settings: BullMQ's defaults (completed jobs kept: a hash per job plus the completed set, as
 * a tracked Beton job keeps its row; no removeOnComplete), its keys under the prefix
 * `beton-bench`, a queue of its own per run, obliterated afterwards. BullMQ has no batch
 * fetch in its open-source edition: each slot takes its next job in the call that completes
 * the previous one (moveToFinished), so `localQueue` does not apply.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { chunks, drainTimeoutMs, fmt, progress, result, waitUntil, type PeerResult, type Workload } from './workload.ts';

const PREFIX = 'beton-bench';

/** The Redis server's version when it answers within 2 s, else why not (the bench skips BullMQ then). */
export async function probeRedis(redisUrl: string): Promise<{ version: string } | { error: string }> {
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {}); // reported below
  try {
    await redis.connect();
    const info = await redis.info('server');
    return { version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown' };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    redis.disconnect();
  }
}

export async function runBullmq(redisUrl: string, queueName: string, workload: Workload): Promise<PeerResult> {
  const { jobs: N, concurrency, log } = workload;
  // Connections BullMQ makes and closes itself (ioredis, with the settings it needs to block).
  const queue = new Queue(queueName, { connection: { url: redisUrl }, prefix: PREFIX });
  let worker: Worker | undefined;
  try {
    await queue.waitUntilReady();
    const t0 = performance.now();
    for (const { start, size } of chunks(N)) {
      await queue.addBulk(Array.from({ length: size }, (_, k) => ({ name: 'noop', data: { key: `bullmq-${start + k}` } })));
    }
    const t1 = performance.now();
    log(`  added ${fmt(N)} BullMQ jobs in ${((t1 - t0) / 1000).toFixed(2)} s; running them (concurrency ${concurrency}, completed jobs kept)…`);
    let handled = 0;
    let completed = 0;
    const ticker = progress(workload, 'bullmq', () => completed, t1);
    worker = new Worker(queueName, async () => void handled++, { connection: { url: redisUrl }, prefix: PREFIX, concurrency });
    worker.on('completed', () => void completed++);
    worker.on('error', (error) => log(`  bullmq worker: ${error.message}`));
    try {
      // 'completed' fires once the job is in the completed set (moveToFinished has returned).
      await waitUntil(() => completed >= N, drainTimeoutMs(workload), 'bullmq');
    } finally {
      clearInterval(ticker);
    }
    const t2 = performance.now();
    await worker.close();
    const counts = await queue.getJobCounts('completed');
    return result(workload, t0, t1, t2, { handled, finished: counts.completed ?? 0 });
  } finally {
    await worker?.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}

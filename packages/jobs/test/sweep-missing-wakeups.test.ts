/**
 * The scheduled sweep looks for waiting jobs with no wake-up at all (a check that reads the
 * month's whole queue) on its first run in a process and then once an hour, not every 5 minutes;
 * every other sweep still re-wakes stranded jobs. recoverStuckJobs called directly (the CLI, an
 * admin) looks every time.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobClient } from '../src/enqueue.ts';
import { sweepStuckJobsHandler } from '../src/jobs/sweep-stuck-jobs/handler.ts';
import { createLogger } from '../src/logger.ts';
import { migrateQueue } from '../src/migrate.ts';
import { waitingJob } from './fixtures/definitions.ts';
import { recoverStuckJobs } from '../src/sweeper.ts';
import { deleteWakeupsOf, listWakeups } from '../src/wakeups.ts';

const waiting = waitingJob('test-missing-wakeup');

describe('the scheduled sweep and jobs without a wake-up', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sweep_missing_wakeups');
    await migrateQueue(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('re-wakes them on its first run, then leaves the check to the next hour; recoverStuckJobs looks every time', async () => {
    const jobs = createJobClient(db.pool, [waiting]);
    const { ids } = await jobs.enqueueMany('test-missing-wakeup', [{ payload: { key: 'a' } }, { payload: { key: 'b' } }]);
    const [a, b] = ids as [number, number];
    await db.pool.query(`update jobs set run_at = now() - interval '2 minutes'`);
    const sweep = sweepStuckJobsHandler({ pool: db.pool, stuckRunningMs: 600_000, staleHeartbeatMs: 60_000 });
    const ctx = { log: createLogger({ level: 'silent' }) } as unknown as Parameters<typeof sweep>[1];
    const payload = { dueAt: new Date().toISOString() };

    await deleteWakeupsOf(db.pool, [a]);
    await sweep(payload, ctx);
    expect(await listWakeups(db.pool, { jobIds: [a] })).toHaveLength(1);

    await deleteWakeupsOf(db.pool, [b]);
    await sweep(payload, ctx);
    expect(await listWakeups(db.pool, { jobIds: [b] })).toHaveLength(0);
    expect((await recoverStuckJobs(db.pool, { missingWakeups: false })).requeued).toEqual([]);

    expect((await recoverStuckJobs(db.pool)).requeued.map((r) => r.jobId)).toEqual([b]);
    expect(await listWakeups(db.pool, { jobIds: [b] })).toHaveLength(1);
  });
});

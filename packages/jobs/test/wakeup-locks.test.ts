/**
 * Beton's writes to graphile-worker's wake-up table never wait for a row another transaction
 * holds, so they cannot deadlock with graphile-worker's completion of a batch: a completion
 * that fails stops its job runner (graphile-worker 0.18: "Could not completeJobs; queue is in an
 * inconsistent state; aborting"). The suite's drill saw an email runner die of such a deadlock
 * (40P01 "while deleting tuple") on December 4, after a database fault.
 *
 * Each case holds one wake-up as a completion does (a delete not yet committed), runs Beton's
 * write over it and two others, then deletes a second wake-up in the same completion. Before the
 * fix the write locked the first row and waited for the held one, and PostgreSQL broke the cycle
 * by failing one side after its deadlock_timeout.
 */
import { createTestDatabase, type Pool, type TestDatabase } from '@beton/db';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobClient } from '../src/enqueue.ts';
import { graphilePool } from '../src/engine/graphile-pool.ts';
import { writeHeartbeat } from '../src/engine/sql/heartbeat.ts';
import { migrateQueue } from '../src/migrate.ts';
import { waitingJob } from './fixtures/definitions.ts';
import { deleteWakeupsOf, listWakeups, releaseAbandonedWakeups, setWakeups } from '../src/wakeups.ts';

const waiting = waitingJob('test-wakeup-locks');

const POOL_ID = 'graphile-pool-a';

interface Wakeups {
  jobIds: number[];
  /** The wake-ups' ids, in the order of their jobs. */
  ids: string[];
}

describe("wake-up row locks: Beton's writes and graphile-worker's completion", () => {
  let db: TestDatabase;
  let batch = 0;
  beforeAll(async () => {
    db = await createTestDatabase('wakeup_locks');
    await migrateQueue(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** Three jobs whose wake-ups the pool POOL_ID fetched five minutes ago and has not touched since. */
  async function heldWakeups(): Promise<Wakeups> {
    batch += 1;
    const jobs = createJobClient(db.pool, [waiting]);
    const { ids: jobIds } = await jobs.enqueueMany(
      'test-wakeup-locks',
      [0, 1, 2].map((i) => ({ payload: { key: `${batch}-${i}` } })),
    );
    await setWakeups(db.pool, { lockedBy: POOL_ID, lockedAgoMs: 5 * 60_000 }, jobIds);
    const rows = await listWakeups(db.pool, { jobIds });
    return { jobIds, ids: jobIds.map((j) => rows.find((r) => r.jobId === Number(j))!.id) };
  }

  /**
   * A completion of wake-ups 0 and 1 in two steps, with `write` (over all three) started between
   * them; returns how each side ended.
   */
  async function completionAround(w: Wakeups, write: (pool: Pool) => Promise<unknown>): Promise<string[]> {
    const completion = await db.pool.connect();
    try {
      await completion.query('begin');
      await completion.query(`delete from graphile_worker._private_jobs where id = $1`, [w.ids[1]]);
      const written = write(db.pool);
      await sleep(300); // the write takes what it can and, before the fix, waits for wake-up 1
      const completed = (async () => {
        await completion.query(`delete from graphile_worker._private_jobs where id = $1`, [w.ids[0]]);
        await completion.query('commit');
      })();
      const settled = await Promise.allSettled([written, completed]);
      return settled.map((s) => (s.status === 'fulfilled' ? 'ok' : String(s.reason)));
    } finally {
      await completion.query('rollback').catch(() => undefined);
      completion.release();
    }
  }

  it("the heartbeat's touch of its pool's wake-ups skips one being completed and touches the rest", async () => {
    const w = await heldWakeups();
    const ended = await completionAround(w, (pool) =>
      writeHeartbeat(pool, { workerId: 'test-worker', jobIds: [], canTake: true, stallReason: null, runnerDeaths: 0, held: { poolId: POOL_ID, ids: w.ids } }),
    );
    expect(ended).toEqual(['ok', 'ok']);
    const left = await listWakeups(db.pool, { jobIds: w.jobIds });
    expect(left.map((r) => r.id)).toEqual([w.ids[2]]); // the completion deleted its two
    expect(Date.now() - left[0]!.lockedAt!.getTime()).toBeLessThan(60_000); // touched, not five minutes old
  });

  it("the sweeper's release of abandoned locks skips one being completed and releases the rest", async () => {
    const w = await heldWakeups();
    const ended = await completionAround(w, (pool) => releaseAbandonedWakeups(pool, `now() - make_interval(secs => $1::float8 / 1000)`, [60_000]));
    expect(ended).toEqual(['ok', 'ok']);
    const left = await listWakeups(db.pool, { jobIds: w.jobIds });
    expect(left.map((r) => [r.id, r.lockedBy])).toEqual([[w.ids[2], null]]);
  });

  it("the sweeper's delete of recovered jobs' wake-ups skips one being completed and deletes the rest", async () => {
    const w = await heldWakeups();
    const ended = await completionAround(w, (pool) => deleteWakeupsOf(pool, w.jobIds));
    expect(ended).toEqual(['ok', 'ok']);
    expect(await listWakeups(db.pool, { jobIds: w.jobIds })).toEqual([]);
  });

  it("graphile-worker's batched completion, failed anyway by a deadlock, is run again instead of stopping the runner", async () => {
    const w = await heldWakeups();
    const other = await db.pool.connect();
    const graphile = await graphilePool(db.pool, { deadlineMs: 10_000 }).connect();
    try {
      await other.query('begin');
      await other.query(`update graphile_worker._private_jobs set locked_at = now() where id = $1`, [w.ids[1]]);
      // graphile-worker 0.18's completion of a batch (sql/completeJobs.js), its statement name included.
      const completion = graphile.query({
        text: `delete from graphile_worker._private_jobs as jobs using unnest($1::bigint[]) n(n) where id = n`,
        values: [[w.ids[0], w.ids[1]]],
        name: 'complete_jobs/graphile_worker',
      });
      // It deletes wake-up 0 and waits for 1; the other transaction then wants 0: a deadlock,
      // which the completion, waiting first, is the first to detect and is failed by.
      const waiting = async () =>
        (
          await db.pool.query(
            `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'delete from graphile_worker._private_jobs as jobs%'`,
          )
        ).rowCount === 1;
      for (let i = 0; i < 50 && !(await waiting()); i++) await sleep(20);
      expect(await waiting()).toBe(true);
      const otherWrite = other.query(`update graphile_worker._private_jobs set locked_at = now() where id = $1`, [w.ids[0]]).then(() => other.query('commit'));
      const settled = await Promise.allSettled([completion, otherWrite]);
      expect(settled.map((r) => (r.status === 'fulfilled' ? 'ok' : String(r.reason)))).toEqual(['ok', 'ok']);
      expect((await listWakeups(db.pool, { jobIds: w.jobIds })).map((r) => r.id)).toEqual([w.ids[2]]);
    } finally {
      await other.query('rollback').catch(() => undefined);
      other.release();
      graphile.release();
    }
  });
});

/**
 * Waiting jobs no worker will take (wakeups.ts: strandedWakeupsFrom), read from Beton's indexes on
 * graphile-worker's wake-up table: HR's progress page asks on every refresh, and a month in flight
 * at 500,000 employees holds 335,000 pending wake-ups (bench:scale), so the read must not scan
 * them. Each of the three cases is found, and nothing else.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobClient } from '../src/enqueue.ts';
import { migrateQueue } from '../src/migrate.ts';
import { waitingJob } from './fixtures/definitions.ts';
import { setWakeups, strandedWakeupsFrom, WAKEUP_INDEXES, wakeupTableMaintenance } from '../src/wakeups.ts';

const waiting = waitingJob('test-stranded');

// A wake-up is stranded when its job has been due for a minute and it is locked by nobody who
// touched it for that minute, worn out, or pushed back past now + a minute.
const THRESHOLD_MS = '60000';
const BEFORE = `now() - interval '60 seconds'`;
const STRANDED = `select j.id from ${strandedWakeupsFrom(THRESHOLD_MS, BEFORE)}`;

describe('stranded wake-ups', () => {
  let db: TestDatabase;
  let ids: number[];
  beforeAll(async () => {
    db = await createTestDatabase('stranded_wakeups');
    await migrateQueue(db.pool); // graphile-worker's schema and Beton's indexes on it
    const jobs = createJobClient(db.pool, [waiting]);
    // 5,000 jobs waiting in a long queue (their wake-ups free to take), due two minutes ago.
    const result = await jobs.enqueueMany(
      'test-stranded',
      Array.from({ length: 5000 }, (_, i) => ({ payload: { key: `k${i}` } })),
    );
    ids = result.ids;
    await db.pool.query(`update jobs set run_at = now() - interval '2 minutes'`);
    await wakeupTableMaintenance(db.pool, 'analyze');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('finds none in a long queue, however long its jobs have waited', async () => {
    expect((await db.pool.query(STRANDED)).rows).toEqual([]);
  });

  it('finds a wake-up locked by a pool silent for longer than the threshold, one worn out and one pushed back, and only those', async () => {
    const [locked, wornOut, pushedBack, lockedRecently] = ids as [number, number, number, number];
    await setWakeups(db.pool, { lockedBy: 'dead-pool', lockedAgoMs: 5 * 60_000 }, [locked]);
    await db.pool.query(`update graphile_worker._private_jobs set attempts = max_attempts where (payload->>'jobId')::bigint = $1`, [wornOut]);
    await db.pool.query(`update graphile_worker._private_jobs set run_at = now() + interval '10 minutes' where (payload->>'jobId')::bigint = $1`, [pushedBack]);
    await setWakeups(db.pool, { lockedBy: 'live-pool', lockedAgoMs: 1_000 }, [lockedRecently]);
    const { rows } = await db.pool.query<{ id: number }>(`${STRANDED} order by j.id`);
    expect(rows.map((r) => Number(r.id))).toEqual([locked, wornOut, pushedBack].sort((a, b) => a - b));
  });

  it("reads Beton's indexes, never every wake-up (that each is built valid: graphile-contract.test.ts)", async () => {
    const { rows } = await db.pool.query<{ 'QUERY PLAN': string }>(`explain ${STRANDED}`);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).not.toMatch(/Seq Scan on _private_jobs/);
    for (const index of WAKEUP_INDEXES) expect(plan).toContain(index.name);
  });
});

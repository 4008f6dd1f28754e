/**
 * A bulk enqueue refreshes the planner's statistics of graphile-worker's job table, so the
 * workers' fetches use the job index from the first second of a monthly run instead of
 * scanning and sorting every wake-up until autovacuum gets to the table.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { inTransaction, type Pool } from '@beton/db';
import { fetchWakeupsSql, wakeupTableMaintenance } from '../src/wakeups.ts';

const job = <const N extends string>(name: N) =>
  defineJob({ name, queue: 'test-main', schema: z.object({ key: z.string() }), timeoutMs: 5_000, idempotencyKey: (p) => `${name}:${p.key}` });
const quiet = job('test-stats-quiet');
const bulkInCaller = job('test-stats-caller');
const bulk = job('test-stats-bulk');

/** The plan of graphile-worker's fetch (its shape in getJobs.js, batch of 24) for one task. */
async function fetchPlan(pool: Pool, task: string): Promise<string> {
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain ${fetchWakeupsSql}`, [task]);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('wake-up statistics after a bulk enqueue', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('statistics');
    // This table's statistics change only through what the test does.
    await wakeupTableMaintenance(db.pool, 'autovacuum off');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('plans the fetch of 2,000 fresh wake-ups on the job index, where stale statistics scan and sort them all', async () => {
    const jobs = createJobClient(db.pool, [quiet, bulkInCaller, bulk]);
    // A quiet hour: a few wake-ups of another task, analyzed.
    await jobs.enqueueMany(
      'test-stats-quiet',
      Array.from({ length: 5 }, (_, i) => ({ payload: { key: `q${i}` } })),
    );
    await wakeupTableMaintenance(db.pool, 'analyze');

    // 2,000 in the caller's transaction: enqueueMany cannot refresh uncommitted rows, so the
    // statistics still describe the quiet hour — the problem this guards against.
    const items = Array.from({ length: 2000 }, (_, i) => ({ payload: { key: `k${i}` } }));
    await inTransaction(db.pool, undefined, (client) => jobs.enqueueMany('test-stats-caller', items, { client }));
    expect(await fetchPlan(db.pool, 'test-stats-caller')).toMatch(/Seq Scan on _private_jobs/);

    // 2,000 in enqueueMany's own transaction: refreshed after the commit.
    await jobs.enqueueMany('test-stats-bulk', items);
    const plan = await fetchPlan(db.pool, 'test-stats-bulk');
    expect(plan).toMatch(/Index Scan using jobs_main_index/);
    expect(plan).not.toMatch(/Seq Scan on _private_jobs/);
  });
});

/**
 * Issue 4 / SPEC R8 + R10 with real processes and real signals: a SIGKILLed worker's jobs
 * come back through the heartbeat sweeper; a SIGTERMed worker finishes what it can, hands
 * back what it cannot, and exits 0 before its grace period.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createJobClient } from '../src/enqueue.ts';
import { recoverStuckJobs } from '../src/sweeper.ts';
import type { Pool } from '@beton/db';
import { fixtureDefinitions } from './fixtures/definitions.ts';
import { waitFor } from './helpers.ts';
import { createRunsTable, killAll, lockedGraphileJobs, spawnWorker } from './processes.ts';
import { countWakeups } from '../src/wakeups.ts';

const dbs: TestDatabase[] = [];
async function freshDatabase(name: string) {
  const db = await createTestDatabase(name);
  dbs.push(db);
  await createRunsTable(db.pool);
  return db;
}

async function statusCounts(pool: Pool, ids: number[]) {
  const { rows } = await pool.query<{ status: string; n: number }>(`select status, count(*)::int as n from jobs where id = any($1) group by status`, [ids]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
}

/** Per key: how many times the handler ran, how many runs completed, and on which workers. */
async function runsByKey(pool: Pool) {
  const { rows } = await pool.query<{ key: string; runs: number; completed: number; workers: string[]; outcomes: (string | null)[] }>(
    `select key, count(*)::int as runs, count(*) filter (where outcome = 'completed')::int as completed,
            array_agg(worker_id order by id) as workers, array_agg(outcome order by id) as outcomes
     from test_runs group by key order by key`,
  );
  return new Map(rows.map((r) => [r.key, r]));
}

async function attemptOutcomes(pool: Pool, ids: number[]) {
  const { rows } = await pool.query<{ job_id: number; outcomes: string[]; codes: (string | null)[]; workers: string[] }>(
    `select job_id, array_agg(outcome::text order by id) as outcomes, array_agg(error_code order by id) as codes, array_agg(worker_id order by id) as workers
     from job_attempts where job_id = any($1) group by job_id`,
    [ids],
  );
  return new Map(rows.map((r) => [r.job_id, r]));
}

/**
 * Every graphile-worker job completed and no lock left. Beton marks a job `done` before
 * graphile-worker completes its wake-up (completeJobBatchDelay 0 still means "on the next
 * tick", a query later), so a check straight after `done` can see the live worker's lock for a
 * few milliseconds (a loaded CI run did). Waits up to 3 s — a dead worker's lock would stay 4 h.
 */
async function graphileDrained(pool: Pool) {
  await waitFor(
    'graphile-worker jobs completed and unlocked',
    async () => {
      return (await countWakeups(pool)) === 0 && (await countWakeups(pool, { locked: true })) === 0;
    },
    3000,
    20,
  );
}

describe('stuck-job recovery and graceful shutdown (R8, R10)', () => {
  afterEach(async () => {
    await killAll();
  });
  afterAll(async () => {
    await killAll();
    for (const db of dbs) await db.drop().catch(() => {});
  });

  it('SIGKILL: the jobs of a dead worker are queued again by the sweeper, taken by another worker and finish, one extra attempt each', async () => {
    const db = await freshDatabase('sigkill');
    const env = { CONCURRENCY: '5', HEARTBEAT_MS: '200', SLEEP_TIMEOUT_MS: '25000', SHUTDOWN_GRACE_MS: '30000' };
    const jobs = createJobClient(db.pool, fixtureDefinitions(env));
    const w1 = spawnWorker(db.url, env);
    const w1Id = String((await w1.ready).workerId);
    const { ids } = await jobs.enqueueMany(
      'test-sleep',
      Array.from({ length: 5 }, (_, i) => ({ payload: { key: `held-${i}`, ms: 20_000 } })),
    );
    await waitFor('5 running on w1', async () => (await statusCounts(db.pool, ids)).running === 5, 15_000, 20);
    // The second worker sleeps `ms × 0.01`: the 20 s jobs take 200 ms there.
    const w2 = spawnWorker(db.url, { ...env, TIME_SCALE: '0.01' });
    const w2Id = String((await w2.ready).workerId);
    expect(await lockedGraphileJobs(db.pool)).toBe(5); // w1 holds their wake-ups

    w1.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await w1.exit).signal).toBe('SIGKILL');

    // The recurring sweeper, shortened: every 250 ms, heartbeat threshold 1 s.
    const recovered: number[] = [];
    const sweeper = setInterval(() => {
      void recoverStuckJobs(db.pool, { heartbeatOlderThanMs: 1000 }).then(
        (r) => recovered.push(...r.recovered.map((x) => x.jobId)),
        () => {},
      );
    }, 250);
    try {
      await waitFor('all done', async () => (await statusCounts(db.pool, ids)).done === 5, 15_000, 50);
    } finally {
      clearInterval(sweeper);
    }
    const recoveredAfterMs = Date.now() - killedAt;
    expect(recoveredAfterMs).toBeLessThan(1000 + 250 + 3000); // threshold + sweep interval + pick-up and run
    expect([...recovered].sort()).toEqual([...ids].sort()); // each recovered exactly once

    const { rows } = await db.pool.query(`select id, status, attempts, worker_id from jobs where id = any($1)`, [ids]);
    for (const r of rows) expect(r).toMatchObject({ status: 'done', attempts: 2, worker_id: null });
    const history = await attemptOutcomes(db.pool, ids);
    for (const id of ids) {
      expect(history.get(id)).toMatchObject({ outcomes: ['recovered', 'done'], codes: ['worker_lost', null], workers: [w1Id, w2Id] });
    }
    const runs = await runsByKey(db.pool);
    for (let i = 0; i < 5; i++) expect(runs.get(`held-${i}`)).toMatchObject({ runs: 2, completed: 1, workers: [w1Id, w2Id], outcomes: [null, 'completed'] });
    // graphile-worker's lock of the dead worker is gone (its own sweep would wait 4 h), nothing is left.
    await graphileDrained(db.pool);

    w2.kill('SIGTERM');
    expect((await w2.exit).code).toBe(0);
  });

  it('SIGTERM with 20 running jobs: short ones finish, long ones are handed back at once and taken by another worker, exit 0 before the grace period', async () => {
    const db = await freshDatabase('sigterm');
    // The definitions' timeout (6 s) is within the grace period (6 s), as checkTimeouts demands; the
    // long jobs *estimate* 20 s, so the engine knows at SIGTERM that they cannot finish in time.
    const env = { CONCURRENCY: '20', HEARTBEAT_MS: '500', SLEEP_TIMEOUT_MS: '6000', SHUTDOWN_GRACE_MS: '6000' };
    const jobs = createJobClient(db.pool, fixtureDefinitions(env));
    const w1 = spawnWorker(db.url, env);
    const w1Id = String((await w1.ready).workerId);
    // The second worker boots meanwhile (a second or two); it runs the 20 s jobs at ×0.01.
    const w2 = spawnWorker(db.url, { ...env, TIME_SCALE: '0.01' });
    const short = await jobs.enqueueMany(
      'test-sleep',
      Array.from({ length: 10 }, (_, i) => ({ payload: { key: `short-${i}`, ms: 2000 } })),
    );
    const long = await jobs.enqueueMany(
      'test-sleep',
      Array.from({ length: 10 }, (_, i) => ({ payload: { key: `long-${i}`, ms: 20_000 } })),
    );
    const all = [...short.ids, ...long.ids];
    await waitFor('20 running', async () => (await statusCounts(db.pool, all)).running === 20, 10_000, 10);
    const { rows: holders } = await db.pool.query(`select distinct worker_id from jobs where id = any($1)`, [all]);
    expect(holders).toEqual([{ worker_id: w1Id }]);

    const termAt = Date.now();
    w1.kill('SIGTERM');
    // Long ones: back in the queue within a second, their attempt not counted.
    await waitFor(
      'long ones handed back',
      async () => {
        const { rows } = await db.pool.query(
          `select count(*)::int as n from jobs j where id = any($1) and (status = 'queued' or worker_id is distinct from $2)
           and exists (select 1 from job_attempts a where a.job_id = j.id and a.outcome = 'handed_back')`,
          [long.ids, w1Id],
        );
        return rows[0].n === 10;
      },
      5000,
      10,
    );
    // Typically ~0.1–0.3 s after the signal; bounded loosely for loaded CI machines, and — the
    // point — long before the short jobs end or the grace period does.
    const handedBackAfterMs = Date.now() - termAt;
    expect(handedBackAfterMs).toBeLessThan(2000);
    const { rows: times } = await db.pool.query(
      `select (select max(finished_at) from job_attempts where job_id = any($1) and outcome = 'handed_back') as last_hand_back,
              (select min(finished_at) from test_runs where job_id = any($2) and outcome = 'completed') as first_short_done`,
      [long.ids, short.ids],
    );
    if (times[0].first_short_done) expect(times[0].last_hand_back.getTime()).toBeLessThan(times[0].first_short_done.getTime());

    const exit = await w1.exit;
    const exitAfterMs = Date.now() - termAt;
    expect(exit.code).toBe(0);
    expect(exitAfterMs).toBeLessThan(6000); // the grace period (typically ~2.5 s: the short jobs' 2 s)
    // Nothing that finished during shutdown stays locked in graphile-worker.
    expect(await countWakeups(db.pool, { jobIds: short.ids, locked: true })).toBe(0);
    expect((await db.pool.query(`select stopped_at from workers where id = $1`, [w1Id])).rows[0].stopped_at).not.toBeNull();

    const w2Id = String((await w2.ready).workerId);
    await waitFor('all 20 done', async () => (await statusCounts(db.pool, all)).done === 20, 15_000, 50);

    const { rows } = await db.pool.query<{ id: number; attempts: number; status: string }>(`select id, attempts, status from jobs where id = any($1)`, [all]);
    for (const r of rows) expect(r).toMatchObject({ status: 'done', attempts: 1 });
    const history = await attemptOutcomes(db.pool, all);
    for (const id of short.ids) expect(history.get(id)).toMatchObject({ outcomes: ['done'], workers: [w1Id] });
    for (const id of long.ids) expect(history.get(id)).toMatchObject({ outcomes: ['handed_back', 'done'], workers: [w1Id, w2Id] });
    // No job lost or run twice: every key completed exactly once.
    const runs = await runsByKey(db.pool);
    expect(runs.size).toBe(20);
    for (let i = 0; i < 10; i++) {
      expect(runs.get(`short-${i}`)).toMatchObject({ runs: 1, completed: 1, workers: [w1Id] });
      expect(runs.get(`long-${i}`)).toMatchObject({ runs: 2, completed: 1, workers: [w1Id, w2Id], outcomes: ['aborted', 'completed'] });
    }
    await graphileDrained(db.pool);

    w2.kill('SIGTERM');
    expect((await w2.exit).code).toBe(0);
  });

  it('a second SIGTERM hands every job back at once and exits 0 fast', async () => {
    const db = await freshDatabase('sigterm2');
    const env = { CONCURRENCY: '4', HEARTBEAT_MS: '500', SLEEP_TIMEOUT_MS: '10000', SHUTDOWN_GRACE_MS: '10000' };
    const jobs = createJobClient(db.pool, fixtureDefinitions(env));
    const w1 = spawnWorker(db.url, env);
    await w1.ready;
    // 8 s each: they could finish within the 10 s grace, so the first SIGTERM lets them run.
    const { ids } = await jobs.enqueueMany(
      'test-sleep',
      Array.from({ length: 4 }, (_, i) => ({ payload: { key: `patient-${i}`, ms: 8000 } })),
    );
    await waitFor('4 running', async () => (await statusCounts(db.pool, ids)).running === 4, 10_000, 10);
    w1.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect((await statusCounts(db.pool, ids)).running).toBe(4);
    const secondAt = Date.now();
    w1.kill('SIGTERM');
    const exit = await w1.exit;
    expect(exit.code).toBe(0);
    expect(Date.now() - secondAt).toBeLessThan(4000); // not the ~7.5 s the jobs still needed
    expect(await statusCounts(db.pool, ids)).toEqual({ queued: 4 });
    const { rows } = await db.pool.query(`select count(*)::int as n from jobs where id = any($1) and attempts = 0`, [ids]);
    expect(rows[0].n).toBe(4);
    expect(await lockedGraphileJobs(db.pool)).toBe(0);
    // A fresh wake-up waits for each of them.
    expect(await countWakeups(db.pool)).toBe(4);
  });
});

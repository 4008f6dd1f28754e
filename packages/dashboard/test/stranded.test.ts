/**
 * Issue 17, point 3: nothing stays stranded, and the product's numbers say so. The incident:
 * a worker whose runner had died kept its heartbeat and held the retry wake-up of one email
 * locked; the sweeper freed only locks of stopped or silent workers and ignored `retrying` jobs,
 * so the job sat `retrying`, long past due, while HR's line did not count it and the admin's
 * stuck list did not show it. Here that state is built in the database (the worker row alive,
 * its pool's lock on the wake-up untouched for 2 minutes), next to a job whose worker stopped
 * touching it while running and a job merely waiting in a long queue.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, recoverStuckJobs } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listStuckJobs, listWorkers } from '../src/admin.ts';
import { runProgress } from '../src/runs.ts';
import { deleteWakeupsOf, listWakeups, setWakeups } from '@beton/jobs/wakeups';

describe('stranded jobs are counted and put back', () => {
  let db: TestDatabase;
  let companyId: string;
  let runId: string;
  let ids: { stranded: number; untouched: number; backlog: number; missing: number };

  beforeAll(async () => {
    db = await createTestDatabase('stranded');
    await seedDatabase(db.pool, { employees: 6, companies: 1, invalidRate: 0, seed: 3 });
    await runPayroll({ pool: db.pool, jobs: createJobClient(db.pool, jobDefinitions), lock: new PostgresLock(db.pool), by: 'test' }, '2026-11');
    const run = (await db.pool.query<{ id: string; company_id: string }>('select id, company_id from payroll_runs')).rows[0]!;
    [runId, companyId] = [run.id, run.company_id];
    const renders = (await db.pool.query<{ id: number }>(`select id from jobs where task_name = 'render-slip' order by id`)).rows.map((r) => r.id);
    ids = { stranded: renders[0]!, untouched: renders[1]!, backlog: renders[2]!, missing: renders[3]! };
    // A live worker (fresh heartbeat, not stopped) whose graphile pool is 'pool-zombie'.
    await db.pool.query(
      `insert into workers (id, host, pid, queue, last_seen, graphile_pool_id) values ('zombie', 'h', 1, 'pdf-render', now(), 'pool-zombie')`,
    );
    // Every render job fell due 2 minutes ago (a long queue: their wake-ups are free).
    await db.pool.query(`update jobs set run_at = now() - interval '2 minutes' where task_name = 'render-slip'`);
    await setWakeups(db.pool, { runAtAgoMs: 120_000 });
    // 1. Retrying, due 2 minutes ago; its retry wake-up locked by the zombie, untouched since.
    await db.pool.query(
      `update jobs set status = 'retrying', attempts = 1, last_error = 'provider answered 503', last_error_kind = 'transient', last_error_code = 'provider_unavailable' where id = $1`,
      [ids.stranded],
    );
    await setWakeups(db.pool, { lockedBy: 'pool-zombie', lockedAgoMs: 120_000 }, [ids.stranded]);
    // 2. Running, claimed by the live zombie 2 minutes ago, its heartbeat never touched since.
    await db.pool.query(
      `update jobs set status = 'running', attempts = 1, worker_id = 'zombie', started_at = now() - interval '2 minutes', heartbeat_at = now() - interval '2 minutes' where id = $1`,
      [ids.untouched],
    );
    await db.pool.query(
      `insert into job_attempts (job_id, attempt, worker_id, started_at, payroll_run_id, task_name) values ($1, 1, 'zombie', now() - interval '2 minutes', $2, 'render-slip')`,
      [ids.untouched, runId],
    );
    await deleteWakeupsOf(db.pool, [ids.untouched]);
    // 3. Queued, due 2 minutes ago, no wake-up at all (should never happen: the sweeper looks anyway).
    await deleteWakeupsOf(db.pool, [ids.missing]);
  }, 60_000);

  afterAll(async () => {
    await db?.drop();
  });

  it("HR's stuck count and the admin's stuck list include them, not the job merely waiting in the queue", async () => {
    const progress = await runProgress(db.pool, companyId, runId);
    expect({ stuck: progress.stuck, stranded: progress.stranded, runningTooLong: progress.runningTooLong, failed: progress.failed }).toEqual({
      stuck: 2,
      stranded: 1,
      runningTooLong: 1,
      failed: 0,
    });
    expect(progress.line).toBe('0 sent, 0 failed, 2 stuck');
    const stuck = await listStuckJobs(db.pool);
    expect(stuck.map((j) => [j.id, j.status]).sort()).toEqual(
      [
        [ids.stranded, 'retrying'],
        [ids.untouched, 'running'],
      ].sort(),
    );
    expect(stuck.find((j) => j.id === ids.stranded)!.reason).toEqual({ code: 'stranded', seconds: expect.toSatisfy((s: number) => s >= 100 && s < 200) });
    expect(stuck.find((j) => j.id === ids.untouched)!.reason).toEqual({ code: 'no-heartbeat', seconds: expect.toSatisfy((s: number) => s >= 100 && s < 200) });
    expect(stuck.map((j) => j.id)).not.toContain(ids.backlog);
    // The zombie itself looks alive: it keeps its heartbeat (it is the jobs that say otherwise).
    expect((await listWorkers(db.pool)).find((w) => w.id === 'zombie')?.state).toBe('alive');
  });

  it('the sweeper puts both back with a wake-up any worker can take; the numbers go back to 0', async () => {
    const result = await recoverStuckJobs(db.pool);
    expect(result.requeued.sort((a, b) => a.jobId - b.jobId)).toEqual([
      { jobId: ids.stranded, task: 'render-slip', status: 'retrying' },
      { jobId: ids.missing, task: 'render-slip', status: 'queued' },
    ]);
    expect(result.recovered).toEqual([
      { jobId: ids.untouched, task: 'render-slip', reason: expect.stringMatching(/^not touched by worker zombie for 1\d\d s$/) },
    ]);
    const wakeups = await listWakeups(db.pool, { jobIds: [ids.stranded, ids.untouched, ids.missing] });
    expect(wakeups).toHaveLength(3);
    const { rows: jobRows } = await db.pool.query<{ id: number; wakeup_seq: number; status: string }>(
      `select id, wakeup_seq, status::text from jobs where id = any($1::bigint[])`,
      [wakeups.map((w) => w.jobId)],
    );
    for (const w of wakeups) {
      const j = jobRows.find((r) => r.id === w.jobId)!;
      expect([w.seq, w.lockedAt, j.status]).toEqual([j.wakeup_seq, null, 'queued']);
    }
    const progress = await runProgress(db.pool, companyId, runId);
    expect(progress.stuck).toBe(0);
    expect(await listStuckJobs(db.pool)).toEqual([]);
    // The job waiting in the queue was left alone.
    expect((await recoverStuckJobs(db.pool)).requeued).toEqual([]);
  });

  it("one setting: the scheduler's STUCK_RUNNING_MS decides \"stuck\" on HR's card and the admin's list as in the sweeper", async () => {
    // Running for 3 minutes, heartbeat fresh: not stuck by the default 10 minutes.
    await db.pool.query(
      `update jobs set status = 'running', attempts = 1, worker_id = 'zombie', started_at = now() - interval '3 minutes', heartbeat_at = now() where id = $1`,
      [ids.backlog],
    );
    await db.pool.query(
      `insert into job_attempts (job_id, attempt, worker_id, started_at, payroll_run_id, task_name) values ($1, 1, 'zombie', now() - interval '3 minutes', $2, 'render-slip')`,
      [ids.backlog, runId],
    );
    await db.pool.query(`update workers set last_seen = now() where id = 'zombie'`);
    expect((await runProgress(db.pool, companyId, runId)).runningTooLong).toBe(0);
    expect(await listStuckJobs(db.pool)).toEqual([]);
    // A scheduler running with STUCK_RUNNING_MS=120000 records it (recordSchedulerSettings).
    await db.pool.query(`insert into workers (id, host, pid, queue, last_seen, stuck_running_ms) values ('scheduler', 'h', 2, 'maintenance', now(), 120000)`);
    expect((await runProgress(db.pool, companyId, runId)).runningTooLong).toBe(1);
    expect((await listStuckJobs(db.pool)).map((j) => [j.id, j.reason])).toEqual([[ids.backlog, { code: 'running-too-long', seconds: 120 }]]);
    const swept = await recoverStuckJobs(db.pool, { runningLongerThanMs: 120_000 });
    expect(swept.recovered.map((r) => r.jobId)).toEqual([ids.backlog]);
  });
});

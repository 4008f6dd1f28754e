/**
 * A payroll run completes when none of its slips is open (R13), kept by the trigger
 * payroll_runs_track_completion on `jobs` from the run's counters — both ways, and also when
 * its last two jobs finish at the same moment in two transactions.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('payroll run completion (trigger on jobs)', () => {
  let db: TestDatabase;
  let companyId: string;
  beforeAll(async () => {
    db = await createTestDatabase('run_completion');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Completion Ltd') returning id`)).rows[0]!.id;
  });
  afterAll(() => db?.drop());

  const newRun = async (month: string, status = 'running') =>
    (
      await db.pool.query<{ id: string }>(
        `insert into payroll_runs (company_id, month, status, employee_count, created_by) values ($1, $2, $3::"PayrollRunStatus", 2, 'test') returning id`,
        [companyId, month, status],
      )
    ).rows[0]!.id;
  const addJob = async (runId: string, key: string, status: string, task = 'render-slip') =>
    (
      await db.pool.query<{ id: string }>(
        `insert into jobs (task_name, queue, payload, status, max_attempts, idempotency_key, payroll_run_id, last_error_code)
       values ($1, 'pdf-render', '{}', $2::"JobStatus", 6, $3, $4, case when $2 = 'failed' then 'x' end) returning id`,
        [task, status, key, runId],
      )
    ).rows[0]!.id;
  const runOf = async (id: string) =>
    (await db.pool.query<{ status: string; completed_at: Date | null }>(`select status::text, completed_at from payroll_runs where id = $1`, [id])).rows[0]!;

  it('completes when the last slip job is done or failed, opens again for a resend, and completes again after it', async () => {
    const run = await newRun('2026-01');
    const a = await addJob(run, 'c1:a', 'queued');
    const b = await addJob(run, 'c1:b', 'running');
    expect((await runOf(run)).status).toBe('running');
    await db.pool.query(`update jobs set status = 'done' where id = $1`, [a]);
    expect((await runOf(run)).status).toBe('running');
    await db.pool.query(`update jobs set status = 'failed', last_error_code = 'invalid_recipient' where id = $1`, [b]);
    const first = await runOf(run);
    expect(first.status).toBe('completed');
    expect(first.completed_at).not.toBeNull();
    // HR's resend of the failed slip belongs to the run: open again, then completed again, later.
    const resend = await addJob(run, 'c1:b:resend-1', 'queued');
    expect(await runOf(run)).toMatchObject({ status: 'running', completed_at: first.completed_at });
    await new Promise((r) => setTimeout(r, 20));
    await db.pool.query(`update jobs set status = 'superseded' where id = $1`, [b]);
    await db.pool.query(`update jobs set status = 'done' where id = $1`, [resend]);
    const again = await runOf(run);
    expect(again.status).toBe('completed');
    expect(again.completed_at!.getTime()).toBeGreaterThan(first.completed_at!.getTime());
    // A job of the run that is not a slip (its bank transfers) does not hold it open.
    await addJob(run, 'c1:bank', 'queued', 'submit-bank-transfers');
    expect((await runOf(run)).status).toBe('completed');
  });

  it("leaves a run that is still enqueuing alone (its fan-out's transaction sets it running)", async () => {
    const run = await newRun('2026-02', 'enqueuing');
    const a = await addJob(run, 'c2:a', 'queued');
    await db.pool.query(`update jobs set status = 'done' where id = $1`, [a]);
    expect((await runOf(run)).status).toBe('enqueuing');
  });

  it('a batched claim and finish of 20 jobs over two runs (one statement each) keeps every counter exact and completes both runs', async () => {
    const [r1, r2] = [await newRun('2026-04'), await newRun('2026-05')];
    for (let i = 0; i < 20; i++) await addJob(i < 12 ? r1 : r2, `c4:${i}`, 'queued', i % 2 === 0 ? 'render-slip' : 'send-slip-email');
    const counts = async () =>
      (
        await db.pool.query<{ k: string }>(
          `select payroll_run_id || ' ' || task_name || ' ' || status || ' ' || n as k from run_job_counts where payroll_run_id = any($1::uuid[]) and n <> 0 order by 1`,
          [[r1, r2]],
        )
      ).rows.map((r) => r.k);
    const truth = async () =>
      (
        await db.pool.query<{ k: string }>(
          `select payroll_run_id || ' ' || task_name || ' ' || status || ' ' || count(*) as k from jobs where payroll_run_id = any($1::uuid[]) group by payroll_run_id, task_name, status order by 1`,
          [[r1, r2]],
        )
      ).rows.map((r) => r.k);
    const queues = async () =>
      (
        await db.pool.query<{ k: string }>(
          `select status || ' ' || sum(n) as k from queue_job_counts where queue = 'pdf-render' group by status having sum(n) <> 0 order by 1`,
        )
      ).rows.map((r) => r.k);
    const queueTruth = async () =>
      (await db.pool.query<{ k: string }>(`select status || ' ' || count(*) as k from jobs where queue = 'pdf-render' group by status order by 1`)).rows.map(
        (r) => r.k,
      );
    const batch = `idempotency_key like 'c4:%'`;
    await db.pool.query(`update jobs set status = 'running' where ${batch}`); // the claim of a batch
    expect(await counts()).toEqual(await truth());
    expect(await queues()).toEqual(await queueTruth());
    expect((await runOf(r1)).status).toBe('running');
    // The finish of the batch: most done, some failed, one of r2 left running, then finished alone.
    await db.pool.query(
      `update jobs set status = case when substr(idempotency_key, 4)::int % 5 = 0 then 'failed'::"JobStatus" else 'done'::"JobStatus" end,
              last_error_code = 'x' where ${batch} and idempotency_key <> 'c4:19'`,
    );
    expect(await counts()).toEqual(await truth());
    expect(await queues()).toEqual(await queueTruth());
    expect((await runOf(r1)).status).toBe('completed');
    expect((await runOf(r2)).status).toBe('running');
    await db.pool.query(`update jobs set status = 'done' where idempotency_key = 'c4:19'`);
    expect((await runOf(r2)).status).toBe('completed');
    expect(await counts()).toEqual(await truth());
    expect((await counts()).join('\n')).toContain(`${r1} render-slip done 4`); // 2, 4, 6, 8 (0 and 10 failed)
  });

  it('completes when its last two jobs finish at once in two transactions (neither sees the other in its snapshot)', async () => {
    const run = await newRun('2026-03');
    const a = await addJob(run, 'c3:a', 'running');
    const b = await addJob(run, 'c3:b', 'running', 'send-slip-email');
    const [c1, c2] = [await db.pool.connect(), await db.pool.connect()];
    try {
      await c1.query('begin');
      await c2.query('begin');
      await c1.query(`update jobs set status = 'done' where id = $1`, [a]); // sees b running: stays running
      let second = false;
      const pending = c2.query(`update jobs set status = 'done' where id = $1`, [b]).then(() => (second = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(second, 'the second statement waits for the first transaction').toBe(false);
      await c1.query('commit');
      await pending;
      await c2.query('commit');
    } finally {
      c1.release();
      c2.release();
    }
    expect((await runOf(run)).status).toBe('completed');
  });
});

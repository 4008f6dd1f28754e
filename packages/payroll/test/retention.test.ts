/**
 * Retention on a real database: a pass deletes exactly what is past its period — finished
 * jobs with their attempts, delivery records, slip PDFs past theirs, old schedule and poll
 * history, long-gone worker rows — in batches, never a queued, running or retrying job, never
 * the newest bank poll; the queue and run counters still equal the rows; a row another
 * transaction holds does not make it wait; a pass out of time says so and the next one ends it.
 * A run left running from before the completion trigger is completed when nothing of it is open
 * (payroll_run_open_slip_jobs, the trigger's own condition), never while a slip job is.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeHistory } from '../src/retention.ts';

describe('retention pass', () => {
  let db: TestDatabase;
  const now = new Date('2026-12-03T12:00:00Z');
  const old = "'2025-10-01T00:00:00Z'"; // 14 months before `now`
  const recent = "'2026-11-01T00:00:00Z'";
  const one = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;

  beforeAll(async () => {
    db = await createTestDatabase('retention');
    const { rows } = await db.pool.query<{ id: number }>(
      `with c as (insert into companies (name) values ('Retention Ltd') returning id)
       insert into employees (company_id, code, name_latin, name_bengali, email, salary, bank_account)
       select c.id, 'RET-1', 'R', 'আর', 'r@example.com', '{}', '1' from c returning id`,
    );
    const employee = rows[0]!.id;
    // 40 old finished jobs (30 done, 10 failed), 5 old still queued or retrying, 20 recent done, 3 old
    // done after them; 2 attempts each.
    await db.pool.query(
      `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, status, last_error_code, created_at, payroll_run_id)
       select 'send-slip-email', 'send-email', '{}', 8, 'ret-old-' || i, case when i < 30 then 'done' else 'failed' end::"JobStatus",
              case when i >= 30 then 'invalid_recipient' end, ${old}::timestamptz + make_interval(mins => i), '00000000-0000-4000-a000-0000000000aa'
       from generate_series(0, 39) i;
       insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, status, created_at)
       select 'render-slip', 'pdf-render', '{}', 6, 'ret-open-' || i, case when i < 3 then 'queued' else 'retrying' end::"JobStatus", ${old}
       from generate_series(0, 4) i;
       insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, status, created_at)
       select 'send-slip-email', 'send-email', '{}', 8, 'ret-new-' || i, 'done', ${recent} from generate_series(0, 19) i;
       -- Old jobs whose ids come after recent ones (a transaction that began before the cutoff and
       -- inserted late): retention walks ids up to the newest old one, past the recent ones.
       insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, status, created_at)
       select 'send-slip-email', 'send-email', '{}', 8, 'ret-old-late-' || i, 'done', ${old} from generate_series(0, 2) i;
       insert into job_attempts (job_id, attempt, outcome, finished_at) select id, a, 'done', created_at from jobs, generate_series(1, 2) a;
       insert into email_deliveries (idempotency_key, recipient, status, created_at)
       select 'ret-del-' || i, 'r@example.com', 'sent', case when i < 25 then ${old} else ${recent} end::timestamptz from generate_series(0, 39) i;
       insert into slips (employee_id, month, key, pdf, sha256, bytes, created_at)
       select ${employee}, '2018-' || lpad(i::text, 2, '0'), 'slip-ret-' || i, '\\x00', 'x', 1,
              case when i <= 6 then '2018-06-01T00:00:00Z' else ${recent} end::timestamptz from generate_series(1, 12) i;
       insert into schedule_runs (schedule_id, due_at, enqueued_by) select 'sweep-stuck-jobs', ${old}::timestamptz + make_interval(mins => 5 * i), 'x' from generate_series(0, 9) i;
       insert into bank_polls (due_at, as_of, credited) values (${old}, ${old}, 0), (${old}::timestamptz + interval '15 minutes', ${old}, 0);
       insert into workers (id, host, pid, queue, last_seen, stopped_at) values
         ('gone-stopped', 'h', 1, 'pdf-render', '2026-11-01', '2026-11-01'), ('gone-silent', 'h', 2, 'pdf-render', '2026-11-01', null),
         ('alive', 'h', 3, 'pdf-render', '2026-12-03T11:59:00Z', null);`,
    );
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('deletes in batches exactly what is past its period, keeps the counters true, and waits on no other transaction', async () => {
    // Another transaction holds a recent job's row: the pass must not wait for it.
    const holder = await db.pool.connect();
    await holder.query('begin');
    await holder.query(`select id from jobs where idempotency_key = 'ret-new-0' for update`);
    await db.pool.query(`alter database "${new URL(db.url).pathname.slice(1)}" set lock_timeout = '2s'`);
    let result;
    try {
      // A pass with no time left deletes nothing and says it is not done…
      expect(await purgeHistory(db.pool, { now, batchSize: 7, budgetMs: -1 })).toMatchObject({ done: false, batches: 0 });
      // …the next one ends it.
      result = await purgeHistory(db.pool, { now, batchSize: 7 });
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect(result.done).toBe(true);
    expect(result.deleted).toEqual({ jobs: 43, email_deliveries: 25, month_exports: 0, slips: 6, schedule_runs: 10, bank_polls: 1, workers: 2 });
    expect(result.batches).toBeGreaterThan(7 + 3); // 43 jobs at 7 a statement: 7 batches, and more for the rest
    expect(await one(`select count(*)::int as n from jobs where idempotency_key like 'ret-old-%'`)).toBe(0);
    expect(await one(`select count(*)::int as n from jobs where idempotency_key like 'ret-open-%'`)).toBe(5); // never queued/retrying
    expect(await one(`select count(*)::int as n from jobs where idempotency_key like 'ret-new-%'`)).toBe(20);
    expect(await one(`select count(*)::int as n from job_attempts`)).toBe(2 * 25); // the attempts went with their jobs
    expect(await one(`select count(*)::int as n from bank_polls`)).toBe(1); // the newest stays: the next poll's start
    expect((await db.pool.query<{ id: string }>(`select id from workers order by id`)).rows.map((r) => r.id)).toEqual(['alive']);
    // The counters still equal the rows.
    const counters = (
      await db.pool.query<{ k: string }>(
        `select queue || ' ' || status || ' ' || sum(n) as k from queue_job_counts group by queue, status having sum(n) <> 0 order by 1`,
      )
    ).rows.map((r) => r.k);
    const truth = (
      await db.pool.query<{ k: string }>(`select queue || ' ' || status || ' ' || count(*) as k from jobs group by queue, status order by 1`)
    ).rows.map((r) => r.k);
    expect(counters).toEqual(truth);
    expect(await one(`select count(*)::int as n from run_job_counts where payroll_run_id = '00000000-0000-4000-a000-0000000000aa'`)).toBe(0);
    // A second pass finds nothing.
    expect((await purgeHistory(db.pool, { now, batchSize: 7 })).deleted).toEqual({
      jobs: 0,
      email_deliveries: 0,
      month_exports: 0,
      slips: 0,
      schedule_runs: 0,
      bank_polls: 0,
      workers: 0,
    });
  });

  it('completes a run from before the completion trigger with nothing open, never one with a slip job open', async () => {
    const company = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Old Runs Ltd') returning id`)).rows[0]!.id;
    const run = async (month: string) =>
      (
        await db.pool.query<{ id: string }>(
          `insert into payroll_runs (company_id, month, status, employee_count, created_by) values ($1, $2, 'running', 1, 'test') returning id`,
          [company, month],
        )
      ).rows[0]!.id;
    const [idle, open] = [await run('2025-01'), await run('2025-02')];
    await db.pool.query(
      `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, status, payroll_run_id) values ('render-slip', 'pdf-render', '{}', 6, 'old-run-open', 'queued', $1)`,
      [open],
    );
    expect(await one(`select payroll_run_open_slip_jobs('${open}')::int as n`)).toBe(1);
    expect(await one(`select payroll_run_open_slip_jobs('${idle}')::int as n`)).toBe(0);
    await purgeHistory(db.pool, { now });
    const status = async (id: string) =>
      (await db.pool.query<{ status: string; completed_at: Date | null }>(`select status::text, completed_at from payroll_runs where id = $1`, [id])).rows[0]!;
    expect(await status(idle)).toMatchObject({ status: 'completed', completed_at: expect.any(Date) });
    expect(await status(open)).toMatchObject({ status: 'running', completed_at: null });
  });
});

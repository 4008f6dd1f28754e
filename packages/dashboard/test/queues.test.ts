import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs';
import { approvePayroll } from '@beton/payroll/actions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuesOverview, RATE_WINDOW_S } from '../src/admin.ts';
import { listRunProgress } from '../src/runs.ts';

describe('queues overview (admin)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('queues_overview');
  });
  afterAll(() => db?.drop());

  it('shows the email rate in use: attempts finished in the last 10 s under the provider key, against 40/s', async () => {
    const now = new Date();
    // 30 email attempts finished within the window, 5 just before it, 7 renders (another key: none).
    await db.pool.query(
      `with j as (
         insert into jobs (task_name, queue, payload, status, max_attempts, idempotency_key)
         select t, q, '{}', 'done', 6, t || '-' || i from (values ('send-slip-email', 'send-email', 35), ('render-slip', 'pdf-render', 7)) v(t, q, n), generate_series(1, v.n) i
         returning id, task_name, idempotency_key)
       -- The attempt carries its job's task, as the engine's claim writes it.
       insert into job_attempts (job_id, attempt, task_name, started_at, finished_at, outcome)
       select id, 1, task_name, $1::timestamptz - interval '20 seconds',
              case when task_name = 'send-slip-email' and split_part(idempotency_key, '-', 4)::int > 30 then $1::timestamptz - interval '11 seconds' else $1::timestamptz - interval '3 seconds' end,
              'done'
       from j`,
      [now],
    );
    const view = await queuesOverview(db.pool, now);
    expect(RATE_WINDOW_S).toBe(10);
    expect(view.rates).toEqual([{ key: 'email-provider', perSecond: 40, inUsePerSecond: 3 }]);
    expect(view.queues.find((q) => q.queue === 'send-email')?.counts.done).toBe(35);
  });

  it('delayed jobs have their own column and list: approved reminders are "N due at hh:mm", not queued work that looks stuck', async () => {
    await seedDatabase(db.pool, { employees: 30, companies: 2, invalidRate: 0, seed: 3 });
    const { rows: companies } = await db.pool.query<{ id: string; n: number }>(
      `select c.id, count(e.*)::int as n from companies c join employees e on e.company_id = c.id group by c.id order by c.id`,
    );
    const company = companies[0]!;
    await db.pool.query(`insert into payroll_runs (company_id, month, status, employee_count, created_by) values ($1, '2026-11', 'completed', $2, 'test')`, [
      company.id,
      company.n,
    ]);
    const approvedAt = new Date(Date.now() - 5 * 60_000);
    const { runAt } = await approvePayroll(
      { pool: db.pool, jobs: createJobClient(db.pool, jobDefinitions) },
      { companyId: company.id, month: '2026-11', approvedBy: 'hr:test', now: approvedAt },
    );
    const view = await queuesOverview(db.pool);
    const email = view.queues.find((q) => q.queue === 'send-email')!;
    expect(email.delayed).toBe(company.n);
    expect(email.counts.queued).toBe(0); // nothing due now: not "queued, running 0" as if stuck
    expect(email.oldestWaitingSeconds).toBeNull();
    const due = new Date(Math.floor(runAt.getTime() / 60_000) * 60_000);
    expect(view.delayed).toEqual([{ queue: 'send-email', task: 'send-reminder-email', dueAt: due, n: company.n }]);
    // The run's card counts them too: delayed until the reminder time.
    const [run] = await listRunProgress(db.pool, company.id);
    expect(run!.reminders.queued).toBe(company.n);
    expect(run!.remindersAt).toEqual(runAt);
  });
});

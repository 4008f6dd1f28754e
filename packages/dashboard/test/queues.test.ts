import { createPool, createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs';
import { approvePayroll } from '@beton/payroll/actions';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
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

  it("the last hour's chart: a refresh counts new attempts of the open minutes and keeps the closed minutes it counted", async () => {
    // A pool of its own: the chart's closed minutes are kept per pool (per web process), and this
    // test writes attempts in the past, which the engine never does.
    const pool = createPool({ url: db.url, max: 2, applicationName: 'queues-chart' });
    onTestFinished(() => pool.end());
    const now = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
    const attempts = (minutesAgo: number, n: number, outcome = 'done') =>
      pool.query(
        `with j as (insert into jobs (task_name, queue, payload, status, max_attempts, idempotency_key)
                    select 'test-chart', 'maintenance', '{}', 'done', 6, 'chart-' || gen_random_uuid() from generate_series(1, $3::int) returning id)
         insert into job_attempts (job_id, attempt, task_name, started_at, finished_at, outcome)
         select id, 1, 'test-chart', $1::timestamptz - make_interval(mins => $2::int) - interval '1 second', $1::timestamptz - make_interval(mins => $2::int), $4::"AttemptOutcome" from j`,
        [now, minutesAgo, n, outcome],
      );
    const chart = async (at: Date) =>
      Object.fromEntries(
        (await queuesOverview(pool, at)).queues
          .find((q) => q.queue === 'test-chart')
          ?.perMinute.map((m) => [Math.floor((now.getTime() - m.minute.getTime()) / 60_000), `${m.done}/${m.failed}`]) ?? [],
      );
    await attempts(30, 4);
    await attempts(30, 1, 'failed');
    await attempts(0, 2);
    const first = await chart(now);
    expect(first).toMatchObject({ 30: '4/1', 0: '2/0' });
    // Ten seconds later: two more in the open minute are counted; the minute 30 minutes ago comes from what was counted.
    await attempts(0, 2);
    const later = await chart(new Date(now.getTime() + 10_000));
    expect(later).toMatchObject({ 30: '4/1', 0: '4/0' });
    // An hour and a half later both minutes have left the window.
    const gone = await chart(new Date(now.getTime() + 90 * 60_000));
    expect(gone[30]).toBeUndefined();
    expect(gone[0]).toBeUndefined();
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

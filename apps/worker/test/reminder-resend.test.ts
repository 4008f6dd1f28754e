/**
 * HR's two actions after a run, end to end: real worker processes (pdf-render, send-email),
 * real HTTP to the SendGrid-compatible simulator, a real PostgreSQL. The approval reminder
 * (R1 delayed) under an injected clock — the approval's time is given, the engine's clock is
 * the real one — and the one-off resend (R1 one-off), counted in the simulator's store.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { discardJobs, retryJobs } from '@beton/dashboard';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import { approvePayroll, resendSlip, runPayroll, sendSlipCopy, SlipActionRefused } from '@beton/payroll';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_SCHEDULING } from '../../../scripts/lib/fast-scheduling.ts';
import { waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll } from '../../../scripts/lib/processes.ts';

const MONTH = '2026-10';
const MINUTE = 60_000;

describe('approval reminder and slip resend (processes, HTTP, PostgreSQL)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let jobs: JobClient<BetonJobs>;
  let companies: string[];

  const settled = async () => {
    const { rows } = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from jobs where queue in ('pdf-render', 'send-email') and status in ('queued', 'running', 'retrying') and run_at <= now()`,
    );
    return rows[0]!.n === 0;
  };
  const employeesOf = async (companyId: string) =>
    (await db.pool.query<{ id: number; email: string }>('select id, email from employees where company_id = $1 order by id', [companyId])).rows;
  /** Idempotency keys of the messages the simulator accepted for one employee's slips, in order. */
  const slipKeys = (employeeId: number) =>
    provider
      .messages()
      .map((m) => m.customArgs.idempotency_key ?? '')
      .filter((k) => k === `slip:${MONTH}:emp-${employeeId}` || k.startsWith(`slip:${MONTH}:emp-${employeeId}:`));

  beforeAll(async () => {
    db = await createTestDatabase('reminder-resend');
    await seedDatabase(db.pool, { employees: 15, companies: 3, invalidRate: 0, seed: 11 });
    provider = await startProviderSimulator({
      scheduledSends: FAST_SCHEDULING.simulator,
      latencyMs: 40,
      latencySpreadMs: 20,
      ratePerSecond: 40,
      activityApi: true,
      activityPerMinute: 100_000,
    });
    jobs = createJobClient(db.pool, jobDefinitions);
    const env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '150',
      // Lost acks are resolved through the Activity API here (no webhook receiver in this test).
      EMAIL_ACTIVITY_API: 'on',
      EMAIL_ACTIVITY_PER_MINUTE: '6000',
      // Scheduled sends in seconds (the simulator's cancel cutoff shortened to match).
      ...FAST_SCHEDULING.env,
      HEARTBEAT_MS: '1000',
      DB_POOL_MAX: '6',
    };
    const workers = [spawnWorker({ queue: 'pdf-render', env: { ...env, WORKER_CONCURRENCY: '2' } }), spawnWorker({ queue: 'send-email', env })];
    await Promise.all(workers.map((w) => w.ready));
    companies = (await db.pool.query<{ id: string }>('select id from companies order by name')).rows.map((r) => r.id);
    // The month's run, as the schedule makes it: every employee's slip delivered once.
    const summary = await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'test' }, MONTH);
    expect(summary.enqueued).toBe(15);
    await waitUntil('the run delivered', async () => (await settled()) && provider.messages().length === 15, 90_000);
  }, 180_000);

  afterAll(async () => {
    await stopAll(10_000);
    await provider?.close();
    await db?.drop();
  });

  it('the approval reminder goes 30 minutes after the approval (injected clock), not before, once per employee', async () => {
    const [early, due] = companies;
    const reminders = (companyEmployees: Array<{ email: string }>) =>
      provider.messages().filter((m) => m.customArgs.idempotency_key?.startsWith('reminder:') && companyEmployees.some((e) => m.to.includes(e.email)));
    const earlyEmployees = await employeesOf(early!);
    const dueEmployees = await employeesOf(due!);
    // Approved 29 min 50 s ago: its reminders are due in 10 s. Approved 30 min 1 s ago: due now.
    const earlyApproval = new Date(Date.now() - 29 * MINUTE - 50_000);
    await approvePayroll({ pool: db.pool, jobs }, { companyId: early!, month: MONTH, approvedBy: 'hr-early', now: earlyApproval });
    await approvePayroll({ pool: db.pool, jobs }, { companyId: due!, month: MONTH, approvedBy: 'hr-due', now: new Date(Date.now() - 30 * MINUTE - 1000) });
    const earlyDue = earlyApproval.getTime() + 30 * MINUTE;

    await waitUntil('the due reminders', async () => reminders(dueEmployees).length >= dueEmployees.length, 30_000);
    if (Date.now() < earlyDue - 500) expect(reminders(earlyEmployees)).toHaveLength(0);
    await waitUntil('the early company reminders, once due', async () => reminders(earlyEmployees).length >= earlyEmployees.length, 40_000);
    await new Promise((r) => setTimeout(r, 1000)); // a second copy would come now
    await waitUntil('settled', settled, 60_000);

    for (const [list, employees] of [
      [reminders(dueEmployees), dueEmployees],
      [reminders(earlyEmployees), earlyEmployees],
    ] as const) {
      expect(list.map((m) => m.to[0]).sort()).toEqual(employees.map((e) => e.email).sort());
      for (const m of list) expect(m.subject).toBe('Payroll approved for October 2026 / অক্টোবর ২০২৬ মাসের বেতন অনুমোদিত');
    }
    // Not before 30 minutes of the approval's clock: the provider received none earlier.
    for (const m of reminders(earlyEmployees)) expect(m.receivedAt.getTime()).toBeGreaterThanOrEqual(earlyDue);
    // The third company was not approved: no reminders.
    expect(reminders(await employeesOf(companies[2]!))).toHaveLength(0);
  }, 90_000);

  it('a resend after the slip was delivered sends nothing and says so; "send another copy" sends a second email on purpose, once per click', async () => {
    const employee = (await employeesOf(companies[2]!))[0]!;
    expect(slipKeys(employee.id)).toEqual([`slip:${MONTH}:emp-${employee.id}`]);
    const resend = await resendSlip({ pool: db.pool, jobs }, { employeeId: employee.id, month: MONTH, requestedBy: 'hr@third.example' });
    expect(resend).toMatchObject({ outcome: 'delivered', created: false, key: `slip:${MONTH}:emp-${employee.id}`, to: employee.email });
    // A copy is refused for a slip that was never delivered (another month here).
    await expect(sendSlipCopy({ pool: db.pool, jobs }, { employeeId: employee.id, month: '2026-05', requestedBy: 'hr@third.example' })).rejects.toThrow(
      SlipActionRefused,
    );

    const first = await sendSlipCopy({ pool: db.pool, jobs }, { employeeId: employee.id, month: MONTH, requestedBy: 'hr@third.example' });
    expect(first).toMatchObject({ copy: 1, created: true, to: employee.email });
    // A second click while the copy is on its way is that copy, not a third email.
    const click = await sendSlipCopy({ pool: db.pool, jobs }, { employeeId: employee.id, month: MONTH, requestedBy: 'hr@third.example' });
    if (click.created)
      expect(click.copy).toBe(2); // the first copy was already delivered (a fast machine)
    else expect(click).toMatchObject({ copy: 1, jobId: first.jobId });
    const copies = click.created ? 2 : 1;
    await waitUntil('the copies delivered', async () => slipKeys(employee.id).length === 1 + copies, 60_000);
    await waitUntil('settled', settled, 60_000);
    await new Promise((r) => setTimeout(r, 500)); // a stray extra email would come now
    expect(slipKeys(employee.id)).toEqual([
      `slip:${MONTH}:emp-${employee.id}`,
      ...Array.from({ length: copies }, (_, i) => `slip:${MONTH}:emp-${employee.id}:copy-${i + 1}`),
    ]);
    expect(provider.messages({ to: employee.email }).filter((m) => m.attachments.length === 1)).toHaveLength(1 + copies);
    // Still one slip for the month's resend rule: a copy is not an attempt at it.
    expect(await resendSlip({ pool: db.pool, jobs }, { employeeId: employee.id, month: MONTH, requestedBy: 'hr@third.example' })).toMatchObject({
      outcome: 'delivered',
      key: `slip:${MONTH}:emp-${employee.id}`,
    });
  }, 90_000);

  it('a resend replaces the failed attempt before it (superseded, never retried); a number is never reused after an admin discarded a failed resend', async () => {
    const employee = (await employeesOf(companies[2]!))[1]!;
    const month = '2026-09'; // paid long ago (its run completed, its jobs purged): only resends now
    await db.pool.query(
      `insert into payroll_runs (company_id, month, status, employee_count, enqueued_at, completed_at, created_by)
       values ($1, $2, 'completed', 5, now(), now(), 'test')`,
      [companies[2], month],
    );
    const keys = () =>
      provider
        .messages()
        .map((m) => m.customArgs.idempotency_key ?? '')
        .filter((k) => k.startsWith(`slip:${month}:emp-${employee.id}`));
    const statusOf = async (id: number) =>
      (await db.pool.query<{ status: string; superseded_by: string | null }>(`select status::text, superseded_by from jobs where id = $1`, [id])).rows[0];
    const {
      rows: [saved],
    } = await db.pool.query<{ salary: unknown }>('select salary from employees where id = $1', [employee.id]);
    // The slip cannot be made while the employee's salary record is broken: each resend fails into the DLQ.
    await db.pool.query(`update employees set salary = 'null'::jsonb where id = $1`, [employee.id]);
    const broken = await resendSlip({ pool: db.pool, jobs }, { employeeId: employee.id, month, requestedBy: 'hr-1@third.example' });
    expect(broken).toMatchObject({ outcome: 'created', resend: 1 });
    if (broken.outcome !== 'created') throw new Error('unreachable');
    await waitUntil('resend-1 failed', async () => (await statusOf(broken.jobId))?.status === 'failed', 40_000);
    const again = await resendSlip({ pool: db.pool, jobs }, { employeeId: employee.id, month, requestedBy: 'hr-2@third.example' });
    expect(again).toMatchObject({ outcome: 'created', resend: 2 });
    if (again.outcome !== 'created') throw new Error('unreachable');
    // resend-1 is closed by resend-2: out of the DLQ, and an admin's retry of it is refused with the reason.
    expect(await statusOf(broken.jobId)).toEqual({ status: 'superseded', superseded_by: `slip:${month}:emp-${employee.id}:resend-2` });
    await expect(retryJobs(db.pool, { ids: [broken.jobId] }, 'admin@beton.example')).rejects.toThrow(/superseded by resend #2/);
    await waitUntil('resend-2 failed', async () => (await statusOf(again.jobId))?.status === 'failed', 40_000);

    // The admin clears the DLQ: resend-2's job row is deleted. HR fixes the salary and resends.
    expect(await discardJobs(db.pool, { ids: [again.jobId] }, 'admin@beton.example')).toEqual({ discarded: 1 });
    await db.pool.query(`update employees set salary = $2 where id = $1`, [employee.id, JSON.stringify(saved!.salary)]);
    const fixed = await resendSlip({ pool: db.pool, jobs }, { employeeId: employee.id, month, requestedBy: 'hr-3@third.example' });
    expect(fixed).toMatchObject({ outcome: 'created', resend: 3, created: true });
    if (fixed.outcome !== 'created') throw new Error('unreachable');
    await waitUntil('resend-3 delivered', async () => keys().length === 1, 60_000);
    await waitUntil('settled', settled, 60_000);
    expect(keys()).toEqual([`slip:${month}:emp-${employee.id}:resend-3`]);
    expect(await resendSlip({ pool: db.pool, jobs }, { employeeId: employee.id, month, requestedBy: 'hr-4@third.example' })).toMatchObject({
      outcome: 'delivered',
      key: `slip:${month}:emp-${employee.id}:resend-3`,
    });

    // Every resend is on record with who asked, the discarded one too.
    const log = await db.pool.query<{ n: number; requested_by: string; job_id: string }>(
      `select n, requested_by, job_id::text from slip_resends where employee_id = $1 and month = $2 order by n`,
      [employee.id, month],
    );
    expect(log.rows).toEqual([
      { n: 1, requested_by: 'hr-1@third.example', job_id: String(broken.jobId) },
      { n: 2, requested_by: 'hr-2@third.example', job_id: String(again.jobId) },
      { n: 3, requested_by: 'hr-3@third.example', job_id: String(fixed.jobId) },
    ]);
  }, 120_000);
});

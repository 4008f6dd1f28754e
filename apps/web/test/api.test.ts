import { TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { appRouter, type AppRouter } from '../src/server/root.ts';
import type { WebFixture } from './fixtures.ts';
import { call, errorCode, webApiSuite } from './http-api.ts';

const t = webApiSuite();
const { signInRequest, signIn, signOutRequest, client } = t;

/**
 * Every procedure, with an input that names company B's objects. A procedure missing here
 * fails the "whole router" test, so a new one must say how it is scoped.
 *   NOT_FOUND: takes an id; B's id must answer NOT_FOUND to an HR of A.
 *   FORBIDDEN: admin-only.
 *   SCOPED:    no id; the answer must hold only company A's rows.
 *   SELF:      about the caller only.
 */
type Expect = 'NOT_FOUND' | 'FORBIDDEN' | 'SCOPED' | 'SELF' | 'PUBLIC';
function table(): Record<string, { input: unknown; hr: Expect }> {
  const [, b] = t.fx.companies as [WebFixture['companies'][number], WebFixture['companies'][number]];
  const emp = b.employeeIds[0]!;
  const job = b.jobIds[0]!;
  return {
    'auth.me': { input: undefined, hr: 'SELF' },
    'runs.list': { input: undefined, hr: 'SCOPED' },
    'runs.get': { input: { runId: b.runId }, hr: 'NOT_FOUND' },
    'runs.approve': { input: { runId: b.runId }, hr: 'NOT_FOUND' },
    'runs.approvalPlan': { input: { runId: b.runId }, hr: 'NOT_FOUND' },
    'employees.list': { input: { month: t.fx.month, limit: 100, offset: 0 }, hr: 'SCOPED' },
    'employees.get': { input: { id: emp }, hr: 'NOT_FOUND' },
    'employees.updateEmail': { input: { id: emp, email: 'new@example.com' }, hr: 'NOT_FOUND' },
    'employees.resend': { input: { id: emp, month: t.fx.month }, hr: 'NOT_FOUND' },
    'employees.sendCopy': { input: { id: emp, month: t.fx.month }, hr: 'NOT_FOUND' },
    'employees.resendStatus': { input: { jobId: job }, hr: 'NOT_FOUND' },
    'admin.failedList': { input: { companyId: b.id }, hr: 'FORBIDDEN' },
    'admin.failedCount': { input: {}, hr: 'FORBIDDEN' },
    'admin.failedFacets': { input: undefined, hr: 'FORBIDDEN' },
    'admin.job': { input: { id: job }, hr: 'FORBIDDEN' },
    'admin.retry': { input: { ids: [job] }, hr: 'FORBIDDEN' },
    'admin.retryImpact': { input: { ids: [job] }, hr: 'FORBIDDEN' },
    'admin.retryMatching': { input: { filter: {}, matchAll: true, expected: 1 }, hr: 'FORBIDDEN' },
    'admin.discard': { input: { ids: [job] }, hr: 'FORBIDDEN' },
    'admin.discardMatching': { input: { filter: {}, matchAll: true, expected: 1 }, hr: 'FORBIDDEN' },
    'admin.users': { input: undefined, hr: 'FORBIDDEN' },
    'admin.createUser': { input: { email: 'new-hr@example.com', name: 'New HR', role: 'HR', companyId: b.id }, hr: 'FORBIDDEN' },
    'admin.queues': { input: undefined, hr: 'FORBIDDEN' },
    'admin.workers': { input: undefined, hr: 'FORBIDDEN' },
    'admin.stuck': { input: undefined, hr: 'FORBIDDEN' },
    'admin.schedules': { input: undefined, hr: 'FORBIDDEN' },
    'admin.runScheduleNow': { input: { id: `payroll:${b.id}` }, hr: 'FORBIDDEN' },
    'admin.runNowPlan': { input: { id: `payroll:${b.id}` }, hr: 'FORBIDDEN' },
    'admin.emailAccount': { input: undefined, hr: 'FORBIDDEN' },
    'admin.resumeEmail': { input: undefined, hr: 'FORBIDDEN' },
    'admin.sendUnconfirmedAgain': { input: { key: `slip:${t.fx.month}:emp-${emp}` }, hr: 'FORBIDDEN' },
    'admin.queuePauses': { input: undefined, hr: 'FORBIDDEN' },
    'admin.pauseQueue': { input: { queue: 'pdf-render' }, hr: 'FORBIDDEN' },
    'admin.resumeQueue': { input: { queue: 'pdf-render' }, hr: 'FORBIDDEN' },
    'delivery.runCounts': { input: { runId: b.runId }, hr: 'NOT_FOUND' },
    'delivery.addressesToFix': { input: undefined, hr: 'SCOPED' },
    'delivery.employeeEvents': { input: { id: emp }, hr: 'NOT_FOUND' },
    'delivery.unconfirmed': { input: undefined, hr: 'SCOPED' },
    'delivery.sendAgain': { input: { key: `slip:${t.fx.month}:emp-${emp}` }, hr: 'NOT_FOUND' },
    // Issue 22: past months, exports, company settings, dates of birth, companies.
    'months.list': { input: undefined, hr: 'SCOPED' },
    'months.get': { input: { month: t.fx.month }, hr: 'SCOPED' },
    'months.exports': { input: { month: t.fx.month }, hr: 'SCOPED' },
    'months.requestExport': { input: { month: t.fx.month, kind: 'register-csv' }, hr: 'SCOPED' },
    'company.get': { input: undefined, hr: 'SCOPED' },
    'company.setProtectSlips': { input: { protectSlips: false }, hr: 'SCOPED' },
    'company.setSlipPassword': { input: { slipPassword: 'code' }, hr: 'SCOPED' },
    'slipCode.get': { input: { id: emp }, hr: 'NOT_FOUND' },
    'slipCode.make': { input: { id: emp }, hr: 'NOT_FOUND' },
    'dateOfBirth.get': { input: { id: emp }, hr: 'NOT_FOUND' },
    'dateOfBirth.set': { input: { id: emp, dateOfBirth: '1990-03-05' }, hr: 'NOT_FOUND' },
    'admin.companies': { input: undefined, hr: 'FORBIDDEN' },
    'admin.createCompany': { input: { name: 'Not By HR Ltd' }, hr: 'FORBIDDEN' },
    'admin.setProtectSlips': { input: { companyId: b.id, protectSlips: true }, hr: 'FORBIDDEN' },
    // Issue 22: employees and salaries, imports (the upload itself is POST /api/imports: imports.test.ts).
    'people.record': { input: { id: emp }, hr: 'NOT_FOUND' },
    'people.create': {
      input: {
        employee: {
          code: 'SCOPE-1',
          nameLatin: 'Scoped Hire',
          nameBengali: 'নতুন কর্মী',
          email: 'scoped.hire@example.com',
          bankAccount: '101-0000099999',
          effectiveMonth: t.fx.month,
          salary: { basic: 30000, houseRent: 12000, medical: 2000, conveyance: 1500, tax: 1200, providentFund: 3000 },
        },
      },
      hr: 'SCOPED',
    },
    'people.update': {
      input: { id: emp, details: { nameLatin: 'Not Yours', nameBengali: 'আপনার নয়', email: 'not.yours@example.com', bankAccount: '101-0000088888' } },
      hr: 'NOT_FOUND',
    },
    'people.setActive': { input: { id: emp, active: false }, hr: 'NOT_FOUND' },
    'people.changeSalary': {
      input: {
        id: emp,
        change: { effectiveMonth: t.fx.month, salary: { basic: 30000, houseRent: 12000, medical: 2000, conveyance: 1500, tax: 1200, providentFund: 3000 } },
      },
      hr: 'NOT_FOUND',
    },
    'people.resendCorrected': { input: { id: emp, month: t.fx.month }, hr: 'NOT_FOUND' },
    'imports.list': { input: undefined, hr: 'SCOPED' },
    'imports.get': { input: { id: '00000000-0000-4000-8000-000000000000' }, hr: 'NOT_FOUND' },
    'imports.apply': { input: { id: '00000000-0000-4000-8000-000000000000' }, hr: 'NOT_FOUND' },
  };
}

const procedures = () => Object.keys(appRouter._def.procedures).sort();

describe('web API over HTTP', () => {
  it('GET /api/health answers 200 {ok:true}', async () => {
    const res = await fetch(`${t.web.url}/api/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('every procedure of the router is in the scoping table', () => {
    expect(procedures()).toEqual(Object.keys(table()).sort());
  });

  it('unauthenticated → UNAUTHORIZED (HTTP 401) for every procedure and the slip PDF', async () => {
    const anon = client();
    for (const path of procedures()) {
      const { input, hr } = table()[path]!;
      if (hr === 'PUBLIC') continue;
      expect([path, await errorCode(call(anon, path, input))]).toEqual([path, 'UNAUTHORIZED']);
    }
    const res = await fetch(`${t.web.url}/api/trpc/runs.list`);
    expect(res.status).toBe(401);
    expect((await fetch(`${t.web.url}/api/slips/${t.fx.companies[0]!.slipId}/pdf`)).status).toBe(401);
    // A made-up session cookie is no session.
    const forged = await fetch(`${t.web.url}/api/trpc/auth.me`, { headers: { cookie: 'beton.session_token=forged.value' } });
    expect(forged.status).toBe(401);
  });

  it("an HR of company A gets NOT_FOUND for company B's ids, FORBIDDEN for admin procedures, only A's rows from lists", async () => {
    const [a, b] = t.fx.companies as [WebFixture['companies'][number], WebFixture['companies'][number]];
    const hr = client(await signIn(a.hrEmail, a.hrPassword));
    const before = await t.fx.pool.query(`select count(*)::int as n, max(updated_at) as t from employees where company_id = $1`, [b.id]);
    for (const path of procedures()) {
      const { input, hr: expected } = table()[path]!;
      if (expected === 'PUBLIC' || expected === 'SELF') continue;
      if (expected === 'SCOPED') {
        const result = await call(hr, path, input);
        const text = JSON.stringify(result);
        expect(text, path).not.toContain(b.id);
        expect(text, path).not.toContain(b.runId); // runs.list names runs by id, not their company
        for (const id of b.employeeIds.slice(0, 20)) expect(text, path).not.toMatch(new RegExp(`"id":${id}[,}]`));
        continue;
      }
      expect([path, await errorCode(call(hr, path, input))]).toEqual([path, expected]);
    }
    // Nothing of B changed and no job was enqueued for B by A's calls.
    const after = await t.fx.pool.query(`select count(*)::int as n, max(updated_at) as t from employees where company_id = $1`, [b.id]);
    expect(after.rows[0]).toEqual(before.rows[0]);
    const resends = await t.fx.pool.query(`select count(*)::int as n from jobs where company_id = $1 and idempotency_key like '%resend%'`, [b.id]);
    expect(resends.rows[0].n).toBe(0);
    // A's own objects answer.
    expect(await errorCode(call(hr, 'employees.get', { id: a.employeeIds[0] }))).toBe('OK');
    expect(await errorCode(call(hr, 'runs.get', { runId: a.runId }))).toBe('OK');
  });

  it('an ADMIN gets FORBIDDEN (HTTP 403) from every HR procedure', async () => {
    const [a] = t.fx.companies;
    const admin = client(await signIn(t.fx.admin.email, t.fx.admin.password));
    const hrOnly = procedures().filter((path) => ['NOT_FOUND', 'SCOPED'].includes(table()[path]!.hr));
    expect(hrOnly.length).toBeGreaterThan(5);
    for (const path of hrOnly) expect([path, await errorCode(call(admin, path, table()[path]!.input))]).toEqual([path, 'FORBIDDEN']);
    // Even with the HR's own company's ids, and as the HTTP status a client acts on.
    expect(await errorCode(admin.employees.get.query({ id: a!.employeeIds[0]! }))).toBe('FORBIDDEN');
    const res = await fetch(`${t.web.url}/api/trpc/runs.list`, { headers: { cookie: await signIn(t.fx.admin.email, t.fx.admin.password) } });
    expect(res.status).toBe(403);
  });

  it('a foreign id answers HTTP 404 and a slip PDF of another company is 404', async () => {
    const [a, b] = t.fx.companies as [WebFixture['companies'][number], WebFixture['companies'][number]];
    const cookie = await signIn(a.hrEmail, a.hrPassword);
    const res = await fetch(`${t.web.url}/api/trpc/employees.get?input=${encodeURIComponent(JSON.stringify({ json: { id: b.employeeIds[0] } }))}`, {
      headers: { cookie },
    });
    expect(res.status).toBe(404);
    expect((await fetch(`${t.web.url}/api/slips/${b.slipId}/pdf`, { headers: { cookie } })).status).toBe(404);
    const own = await fetch(`${t.web.url}/api/slips/${a.slipId}/pdf`, { headers: { cookie } });
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toBe('application/pdf');
  });

  it('shows the run progress line', async () => {
    const [a] = t.fx.companies;
    const hr = client(await signIn(a!.hrEmail, a!.hrPassword));
    const runs = await hr.runs.list.query();
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    const n = a!.employeeIds.length;
    const failed = a!.employeeIds.filter((_, i) => i % 20 === 1 || i % 20 === 2).length;
    const queued = a!.employeeIds.filter((_, i) => i % 20 === 4).length;
    const sent = n - failed - queued - 1;
    // "failed" is the failed slips; "stuck" (the one running for 15 minutes) is not a failure: said apart.
    expect(run.line).toBe(`${sent} sent, ${failed} failed, 1 stuck`);
    expect([run.failed, run.stuck]).toEqual([failed, 1]);
    // The run's own rate: its emails of the last 5 minutes over the time since the first of them
    // (the fixture's went out at once, a minute or so before this test), not over a fixed 300 s.
    const {
      rows: [first],
    } = await t.fx.pool.query<{ at: Date; n: number }>(
      `select min(finished_at) as at, count(*)::int as n from job_attempts where payroll_run_id = $1 and task_name = 'send-slip-email' and outcome = 'done'`,
      [a!.runId],
    );
    expect(first!.n).toBe(sent);
    const seconds = (Date.now() - first!.at.getTime()) / 1000;
    expect(run.throughputPerSecond).toBeGreaterThan((sent / seconds) * 0.95);
    expect(run.throughputPerSecond).toBeLessThan((sent / (seconds - 5)) * 1.05);
    expect(run.deadlineText).toBe('09:00 on 1 Dec 2026');
    expect(run.deadline.toISOString()).toBe('2026-12-01T03:00:00.000Z');
  });

  it('invalid email on edit → BAD_REQUEST with a field error, nothing saved', async () => {
    const [a] = t.fx.companies;
    const hr = client(await signIn(a!.hrEmail, a!.hrPassword));
    const id = a!.employeeIds[5]!;
    const before = (await t.fx.pool.query(`select email from employees where id = $1`, [id])).rows[0].email;
    try {
      await hr.employees.updateEmail.mutate({ id, email: 'not-an-address@@example' });
      expect.fail('should have been refused');
    } catch (error) {
      expect(error).toBeInstanceOf(TRPCClientError);
      const data = (error as TRPCClientError<AppRouter>).data as { code: string; httpStatus: number; fieldErrors: Record<string, string> };
      expect(data.code).toBe('BAD_REQUEST');
      expect(data.httpStatus).toBe(400);
      expect(data.fieldErrors.email).toBeTruthy();
    }
    expect((await t.fx.pool.query(`select email from employees where id = $1`, [id])).rows[0].email).toBe(before);
    const ok = await hr.employees.updateEmail.mutate({ id, email: ' Fixed.Address@Example.com ' });
    expect(ok.email).toBe('fixed.address@example.com');
    const audit = await t.fx.pool.query(`select actor from audit_log where action = 'update-employee-email'`);
    expect(audit.rows.map((r) => r.actor)).toEqual([`hr:${a!.hrEmail}`]);
  });

  it('double resend of a failed slip → one new attempt; a delivered slip is not sent again; a copy is a separate, explicit action', async () => {
    const [a] = t.fx.companies;
    const hr = client(await signIn(a!.hrEmail, a!.hrPassword));
    const id = a!.employeeIds[21]!; // its email failed (invalid_recipient) in the fixture
    const [one, two] = await Promise.all([hr.employees.resend.mutate({ id, month: t.fx.month }), hr.employees.resend.mutate({ id, month: t.fx.month })]);
    const three = await hr.employees.resend.mutate({ id, month: t.fx.month });
    const ids = [one, two, three].map((r) => (r.outcome === 'delivered' ? null : r.jobId));
    expect(new Set(ids).size).toBe(1);
    expect([one, two].map((r) => r.outcome).sort()).toEqual(['created', 'in-progress']);
    expect(three).toMatchObject({ outcome: 'in-progress', resend: 1, created: false });
    const jobs = await t.fx.pool.query(`select idempotency_key from jobs where employee_id = $1 and idempotency_key like '%resend%'`, [id]);
    expect(jobs.rows.map((r) => r.idempotency_key)).toEqual([`slip:${t.fx.month}:emp-${id}:resend-1`]);
    const status = await hr.employees.resendStatus.query({ jobId: ids[0]! });
    expect(status.overall).toBe('queued');
    // The employee page lists the resend: who asked, when, its job; the failed email it replaced is superseded.
    const month = (await hr.employees.get.query({ id })).months.find((m) => m.month === t.fx.month)!;
    // Who asked, as the page names them: the HR manager's name (never the raw "hr:<email>").
    const hrName = (await t.fx.pool.query<{ name: string }>(`select name from users where email = $1`, [a!.hrEmail])).rows[0]!.name;
    expect(month.resends).toEqual([{ n: 1, copy: false, requestedBy: { kind: 'person', name: hrName }, requestedAt: expect.any(Date), jobId: ids[0] }]);
    expect(Date.now() - month.resends[0]!.requestedAt.getTime()).toBeLessThan(60_000);
    expect(month.jobs.find((j) => j.idempotencyKey === `slip:${t.fx.month}:emp-${id}:email`)).toMatchObject({
      status: 'superseded',
      // Why, as a code and the attempt that replaced it (the page writes "Replaced by resend #1, which HR asked for.").
      supersededBy: { kind: 'resend', n: 1, code: 'superseded_by_resend' },
    });
    // A copy of a slip not yet delivered is refused (409): Resend is what sends it.
    expect(await errorCode(hr.employees.sendCopy.mutate({ id, month: t.fx.month }))).toBe('CONFLICT');
    // The admin no longer finds the replaced job in the DLQ: "superseded" lists it with the reason, and retrying it is refused (409).
    const admin = client(await signIn(t.fx.admin.email, t.fx.admin.password));
    const replaced = (await admin.admin.failedList.query({ view: 'superseded', companyId: a!.id })).rows.find((r) => r.employeeId === id)!;
    expect(replaced).toMatchObject({
      taskName: 'send-slip-email',
      supersededBy: { key: `slip:${t.fx.month}:emp-${id}:resend-1`, kind: 'resend', n: 1, code: 'superseded_by_resend' },
    });
    expect((await admin.admin.failedList.query({ companyId: a!.id, limit: 200 })).rows.some((r) => r.id === replaced.id)).toBe(false);
    expect(await errorCode(admin.admin.retry.mutate({ ids: [replaced.id] }))).toBe('CONFLICT');

    // A delivered slip: Resend says so and sends nothing; "Send another copy" makes copy-1 on purpose.
    const sent = a!.employeeIds[7]!;
    const again = await hr.employees.resend.mutate({ id: sent, month: t.fx.month });
    expect(again).toMatchObject({ outcome: 'delivered', key: `slip:${t.fx.month}:emp-${sent}` });
    const copy = await hr.employees.sendCopy.mutate({ id: sent, month: t.fx.month });
    expect(copy).toMatchObject({ copy: 1, created: true });
    const sentJobs = await t.fx.pool.query(`select idempotency_key, priority from jobs where employee_id = $1 and task_name = 'render-slip' order by id`, [
      sent,
    ]);
    expect(sentJobs.rows).toEqual([
      { idempotency_key: `slip:${t.fx.month}:emp-${sent}`, priority: 0 },
      { idempotency_key: `slip:${t.fx.month}:emp-${sent}:copy-1`, priority: -1000 },
    ]);
  });

  it('admin-only procedures refuse HR with FORBIDDEN (HTTP 403); admin retries all matching, audited', async () => {
    const [a] = t.fx.companies;
    const hrCookie = await signIn(a!.hrEmail, a!.hrPassword);
    const res = await fetch(`${t.web.url}/api/trpc/admin.queues`, { headers: { cookie: hrCookie } });
    expect(res.status).toBe(403);
    const admin = client(await signIn(t.fx.admin.email, t.fx.admin.password));
    const filter = { errorCode: 'provider_unavailable' };
    const count = await admin.admin.failedCount.query(filter);
    expect(count).toBeGreaterThan(0);
    const { retried } = await admin.admin.retryMatching.mutate({ filter, expected: count });
    expect(retried).toBe(count);
    expect(await admin.admin.failedCount.query(filter)).toBe(0);
    expect(await admin.admin.failedCount.query({ errorCode: 'invalid_recipient' })).toBeGreaterThan(0);
    const audit = await t.fx.pool.query(`select actor from audit_log where action = 'retry-failed-jobs'`);
    expect(audit.rows.map((r) => r.actor)).toEqual([`admin:${t.fx.admin.email}`]);
    // Admin pages' data answers.
    expect((await admin.admin.queues.query()).queues.length).toBeGreaterThan(0);
    expect((await admin.admin.schedules.query()).length).toBeGreaterThanOrEqual(t.fx.companies.length);
    // "Run now" on a company's payroll schedule enqueues its fan-out once; once its month was
    // run (by the schedule, the CLI or an earlier press), it says when and by whom, and enqueues nothing.
    const fresh = await t.fx.pool.query<{ id: string }>(`insert into companies (name) values ('Run-now Ltd') returning id`);
    const id = `payroll:${fresh.rows[0]!.id}`;
    const plan = await admin.admin.runNowPlan.query({ id });
    expect(plan).toMatchObject({ kind: 'payroll', companyName: 'Run-now Ltd', employees: 0, alreadyRun: null });
    const first = await admin.admin.runScheduleNow.mutate({ id });
    const again = await admin.admin.runScheduleNow.mutate({ id });
    expect(first.outcome).toBe('enqueued');
    expect(again).toEqual({ ...first, outcome: 'already-enqueued' });
    if (first.outcome === 'already-run') throw new Error('unreachable');
    expect(first.month).toBe(plan.kind === 'payroll' ? plan.month : null);
    await t.fx.pool.query(
      `insert into payroll_runs (company_id, month, status, created_by, started_at) values ($1, $2, 'completed', 'cli:ops@host-1', '2026-12-01T02:00:00Z')`,
      [fresh.rows[0]!.id, first.month],
    );
    const done = await admin.admin.runScheduleNow.mutate({ id });
    expect(done).toEqual({ outcome: 'already-run', month: first.month, startedAt: new Date('2026-12-01T02:00:00Z'), by: { kind: 'cli', user: 'ops' } });
    expect((await admin.admin.runNowPlan.query({ id })).kind === 'payroll' && (await admin.admin.runNowPlan.query({ id }))).toMatchObject({
      alreadyRun: { by: { kind: 'cli', user: 'ops' } },
    });
    const fanouts = await t.fx.pool.query(`select count(*)::int as n from jobs where task_name = 'payroll-fanout' and payload->>'companyId' = $1`, [
      fresh.rows[0]!.id,
    ]);
    expect(fanouts.rows[0].n).toBe(1);
    expect(await errorCode(admin.admin.runScheduleNow.mutate({ id: 'payroll:00000000-0000-4000-8000-000000000000' }))).toBe('NOT_FOUND');
  });

  it('sign-in: the session is stored, the password is an argon2id hash, the user gets role and company', async () => {
    const [a] = t.fx.companies;
    const cookie = await signIn(a!.hrEmail, a!.hrPassword);
    expect(await client(cookie).auth.me.query()).toEqual({
      email: a!.hrEmail,
      name: `HR, ${a!.name}`,
      role: 'HR',
      companyId: a!.id,
      companyName: a!.name,
      mustChangePassword: false,
    });
    const admin = await client(await signIn(t.fx.admin.email, t.fx.admin.password)).auth.me.query();
    expect([admin.role, admin.companyId]).toEqual(['ADMIN', null]);
    const { rows } = await t.fx.pool.query<{ provider_id: string; password: string; sessions: number }>(
      `select a.provider_id, a.password, (select count(*)::int from sessions s where s.user_id = u.id and s.expires_at > now()) as sessions
       from users u join accounts a on a.user_id = u.id where u.email = $1`,
      [a!.hrEmail],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.provider_id).toBe('credential');
    expect(rows[0]!.password).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(rows[0]!.sessions).toBeGreaterThan(0);
    // Nobody signs up: users are created by the seed, an operator or an admin.
    const signUp = await fetch(`${t.web.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.web.url },
      body: JSON.stringify({ email: 'new@example.com', password: 'a-long-password', name: 'New' }),
    });
    expect(signUp.status).toBe(404);
    expect((await t.fx.pool.query(`select count(*)::int as n from users where email = 'new@example.com'`)).rows[0].n).toBe(0);
  });

  it('sign-in: a wrong password is HTTP 401 and the 6th attempt from one IP is HTTP 429', async () => {
    const [, , c] = t.fx.companies;
    // From the socket's 127.0.0.1, each at another (made-up) account, so only the per-address
    // limit counts (the per-account one: security.test.ts).
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await signInRequest(`nobody-${i}@example.com`, 'wrong-password')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    // Even the right password is refused now, from that address, with no cookie set.
    const blocked = await signInRequest(c!.hrEmail, c!.hrPassword);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.getSetCookie()).toEqual([]);
    // The count lives in PostgreSQL (shared by every web replica), not in the job engine's table.
    const { rows } = await t.fx.pool.query<{ key: string; count: number }>(`select key, count from auth_rate_limits where key like '%/sign-in/email'`);
    expect(rows).toContainEqual({ key: '127.0.0.1|/sign-in/email', count: 5 });
    // Another address still signs in, to the same account.
    expect(await signIn(c!.hrEmail, c!.hrPassword)).toMatch(/^beton\.session_token=/);
  });

  it('sign-out through Better Auth ends the session; the old cookie no longer works', async () => {
    const [a] = t.fx.companies;
    const cookie = await signIn(a!.hrEmail, a!.hrPassword);
    const hr = client(cookie);
    expect((await hr.auth.me.query()).email).toBe(a!.hrEmail);
    const out = await signOutRequest(cookie, t.web.url);
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().join('\n')).toMatch(/beton\.session_token=;.*Max-Age=0/i);
    expect(await errorCode(hr.auth.me.query())).toBe('UNAUTHORIZED');
    expect((await fetch(`${t.web.url}/api/slips/${a!.slipId}/pdf`, { headers: { cookie } })).status).toBe(401);
  });

  it('sign-in and sign-out from a foreign origin are refused (CSRF)', async () => {
    const [a] = t.fx.companies;
    expect((await signInRequest(a!.hrEmail, a!.hrPassword, { origin: 'https://evil.example' }, '127.9.0.1')).status).toBe(403);
    const cookie = await signIn(a!.hrEmail, a!.hrPassword);
    const out = await signOutRequest(cookie, 'https://evil.example');
    expect(out.status).toBe(403);
    expect((await client(cookie).auth.me.query()).email).toBe(a!.hrEmail);
  });
});

describe('run stages, approval reminders, DLQ filters and confirmed counts over HTTP', () => {
  it("the run's stages count slips, not jobs: they add up to the employee count and done is the sent count", async () => {
    const [a] = t.fx.companies;
    const hr = client(await signIn(a!.hrEmail, a!.hrPassword));
    const run = (await hr.runs.list.query())[0]!;
    // Each slip's stage is the status of its live attempt's newest job (a superseded job is no
    // attempt any more: a resend replaced it); every render of the fixture is done.
    const { rows } = await t.fx.pool.query<{ status: string; n: number }>(
      `select status::text, count(*)::int as n from (
         select distinct on (employee_id) status from jobs
         where payroll_run_id = $1 and task_name in ('render-slip', 'send-slip-email') and status <> 'superseded'
         order by employee_id, id desc) live group by 1`,
      [a!.runId],
    );
    const expected = { done: 0, running: 0, queued: 0, retrying: 0, failed: 0, ...Object.fromEntries(rows.map((r) => [r.status, r.n])) };
    expect(run.slips).toEqual(expected);
    expect(Object.values(run.slips).reduce((x, y) => x + y, 0)).toBe(a!.employeeIds.length);
    expect(run.employeeCount).toBe(a!.employeeIds.length);
    expect(run.line).toBe(`${run.slips.done} sent, ${run.slips.failed} failed${run.stuck ? `, ${run.stuck} stuck` : ''}`);
    expect(run.lineBn).toBe(`${run.slips.done}টি পাঠানো হয়েছে, ${run.slips.failed}টি ব্যর্থ${run.stuck ? `, ${run.stuck}টি আটকে আছে` : ''}`);
    expect(run.eta.textBn).toMatch(/[\u0980-\u09FF]/);
  });

  it('approve: the reminder time is in the runs list after a reload, and approving again answers the same time', async () => {
    const [a] = t.fx.companies;
    const hr = client(await signIn(a!.hrEmail, a!.hrPassword));
    expect((await hr.runs.get.query({ runId: a!.runId })).remindersAt).toBeNull();
    const before = Date.now();
    const first = await hr.runs.approve.mutate({ runId: a!.runId });
    // One per active employee of A (the scoping walk added one through people.create).
    const active = (await t.fx.pool.query<{ n: number }>(`select count(*)::int as n from employees where company_id = $1 and deactivated_at is null`, [a!.id]))
      .rows[0]!.n;
    expect(active).toBeGreaterThanOrEqual(a!.employeeIds.length);
    expect(first.reminders).toBe(active);
    expect(first.runAt.getTime()).toBeGreaterThanOrEqual(before + 30 * 60_000 - 1);
    expect(first.runAt.getTime()).toBeLessThan(Date.now() + 30 * 60_000);
    // A reload reads the run again: the page can say when the reminders go.
    const reloaded = (await hr.runs.list.query()).find((r) => r.id === a!.runId)!;
    expect(reloaded.approvedAt).not.toBeNull();
    expect(reloaded.remindersAt).toEqual(first.runAt);
    expect(first.already).toBeNull();
    // A second approval (another tab) enqueues nothing and says when and by whom it was approved.
    await new Promise((r) => setTimeout(r, 1_100));
    const again = await hr.runs.approve.mutate({ runId: a!.runId });
    expect(again).toEqual({ ...first, already: { approvedAt: reloaded.approvedAt, approvedBy: reloaded.approvedBy } });
    expect(reloaded.approvedBy).toMatchObject({ kind: 'person' });
    expect((await hr.runs.get.query({ runId: a!.runId })).remindersAt).toEqual(first.runAt);
    // The reminder jobs themselves go at that time, one per employee.
    const { rows } = await t.fx.pool.query<{ n: number; min: Date; max: Date }>(
      `select count(*)::int as n, min(run_at) as min, max(run_at) as max from jobs where task_name = 'send-reminder-email' and company_id = $1`,
      [a!.id],
    );
    expect(rows[0]).toEqual({ n: active, min: first.runAt, max: first.runAt });
  });

  describe('failed jobs (DLQ)', () => {
    /** A raw tRPC mutation, for its HTTP status. */
    function mutateRaw(cookie: string, path: string, input: unknown): Promise<Response> {
      return fetch(`${t.web.url}/api/trpc/${path}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', origin: t.web.url },
        body: JSON.stringify(superjson.serialize(input)),
      });
    }

    const C_JOBS: Array<{ code: string; finishedAt: string }> = [
      { code: 'timeout', finishedAt: '2026-11-30T19:00:00Z' }, // 2026-12-01 01:00 in Dhaka (UTC: 30 Nov)
      { code: 'timeout', finishedAt: '2026-11-30T19:00:00Z' },
      { code: 'timeout', finishedAt: '2026-12-01T19:00:00Z' }, // 2026-12-02 01:00 in Dhaka (UTC: 1 Dec)
      { code: 'provider_unavailable', finishedAt: '2026-11-30T17:59:00Z' }, // 2026-11-30 23:59 in Dhaka
      { code: 'provider_unavailable', finishedAt: '2026-11-30T17:59:00Z' },
    ];
    let extra: number[] = [];

    it('set up: transient failures with two error codes on known days', async () => {
      const [, , c] = t.fx.companies;
      const { rows } = await t.fx.pool.query<{ id: number }>(
        `select id from jobs where company_id = $1 and task_name = 'send-slip-email' and status = 'done' order by id desc limit 6`,
        [c!.id],
      );
      expect(rows).toHaveLength(6);
      for (const [i, job] of C_JOBS.entries()) {
        await t.fx.pool.query(
          `update jobs set status = 'failed', last_error_kind = 'transient', last_error_code = $2, last_error = 'gave up after 6 attempts', finished_at = $3 where id = $1`,
          [rows[i]!.id, job.code, job.finishedAt],
        );
      }
      extra = [rows[5]!.id];
    });

    it('filters by error kind (R6: transient / permanent), separately from the error code', async () => {
      const admin = client(await signIn(t.fx.admin.email, t.fx.admin.password));
      const byKind = async (kind: string) =>
        (
          await t.fx.pool.query<{ n: number }>(
            `select count(*)::int as n from jobs where status = 'failed' and last_error_code is not null and last_error_kind = $1::"ErrorKind"`,
            [kind],
          )
        ).rows[0]!.n;
      const permanent = await byKind('permanent');
      expect(permanent).toBeGreaterThan(0);
      expect(await byKind('transient')).toBe(C_JOBS.length);
      expect(await admin.admin.failedCount.query({ errorKind: 'permanent' })).toBe(permanent);
      expect(await admin.admin.failedCount.query({ errorKind: 'transient' })).toBe(C_JOBS.length);
      const transient = await admin.admin.failedList.query({ errorKind: 'transient', limit: 50, offset: 0 });
      expect(transient.rows.map((r) => r.lastErrorKind)).toEqual(C_JOBS.map(() => 'transient'));
      expect(new Set(transient.rows.map((r) => r.lastErrorCode))).toEqual(new Set(['timeout', 'provider_unavailable']));
      expect(await admin.admin.failedCount.query({ errorKind: 'transient', errorCode: 'timeout' })).toBe(3);
      expect(await admin.admin.failedCount.query({ errorKind: 'permanent', errorCode: 'timeout' })).toBe(0);
      expect(await errorCode(admin.admin.failedCount.query({ errorKind: 'sometimes' as 'transient' }))).toBe('BAD_REQUEST');
    });

    it('reads the date filter as days in Dhaka time (as the page shows times), the "to" day included', async () => {
      const admin = client(await signIn(t.fx.admin.email, t.fx.admin.password));
      const count = (f: { fromDay?: string; toDay?: string }) => admin.admin.failedCount.query({ errorKind: 'transient', ...f });
      expect(await count({ fromDay: '2026-12-01', toDay: '2026-12-01' })).toBe(2); // not the 1 Dec UTC one
      expect(await count({ fromDay: '2026-12-02' })).toBe(1);
      expect(await count({ toDay: '2026-11-30' })).toBe(2);
      expect(await count({ fromDay: '2026-11-30', toDay: '2026-12-02' })).toBe(C_JOBS.length);
      expect(await errorCode(count({ fromDay: '2026-13-01' }))).toBe('BAD_REQUEST');
    });

    it('retry all / discard all act only on the count the admin confirmed: a changed count is CONFLICT (HTTP 409) and nothing is done', async () => {
      const cookie = await signIn(t.fx.admin.email, t.fx.admin.password);
      const admin = client(cookie);
      const filter = { errorKind: 'transient' as const };
      const seen = await admin.admin.failedCount.query(filter);
      expect(seen).toBe(C_JOBS.length);
      const audits = async () =>
        (await t.fx.pool.query<{ n: number }>(`select count(*)::int as n from audit_log where action in ('retry-failed-jobs', 'discard-failed-jobs')`)).rows[0]!
          .n;
      const auditsBefore = await audits();
      // Another failure arrives between the confirmation and the click.
      await t.fx.pool.query(
        `update jobs set status = 'failed', last_error_kind = 'transient', last_error_code = 'timeout', last_error = 'late', finished_at = now() where id = $1`,
        [extra[0]],
      );
      const retry = await mutateRaw(cookie, 'admin.retryMatching', { filter, expected: seen });
      expect(retry.status).toBe(409);
      expect(JSON.stringify(await retry.json())).toContain(`now matches ${seen + 1} jobs`);
      expect(await errorCode(admin.admin.discardMatching.mutate({ filter, expected: seen }))).toBe('CONFLICT');
      expect(await admin.admin.failedCount.query(filter)).toBe(seen + 1); // nothing retried, nothing discarded
      expect(await audits()).toBe(auditsBefore);
      // Asked again with the new count, it goes ahead.
      expect(await admin.admin.retryMatching.mutate({ filter, expected: seen + 1 })).toEqual({ retried: seen + 1 });
      expect(await admin.admin.failedCount.query(filter)).toBe(0);
    });
  });
});

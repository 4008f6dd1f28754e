/**
 * The admin console's actions and read models over HTTP, signed in as the ADMIN (the real
 * tRPC API and Better Auth): job detail, discard one and discard all that match, retry one
 * (run to done by a real maintenance worker process), workers, stuck jobs, schedules and
 * "run now". The workers start last: their scheduler sweeps stuck jobs as soon as it ticks.
 */
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type Managed } from '../../../scripts/lib/processes.ts';
import type { WebFixture } from './fixtures.ts';
import { errorCode, webApiSuite } from './http-api.ts';

const started: Managed[] = [];
// The admin's job page links a job's trace to the operators' tracing tool (docs/tracing.md).
const TRACE_LINK = 'https://jaeger.example.com/trace/{traceId}';
const t = webApiSuite({ env: { BETON_TRACE_LINK_TEMPLATE: TRACE_LINK } });
const { signIn, client } = t;

// Registered after the suite's own, so it runs first (hooks stack): no worker outlives the database.
afterAll(async () => {
  await Promise.all(started.map((w) => w.stop(10_000)));
});

type Admin = ReturnType<typeof client>;
interface AttemptRow {
  outcome: 'done' | 'failed' | 'running';
  startedAt: Date;
  finishedAt?: Date;
  errorKind?: string;
  errorCode?: string;
  errorMessage?: string;
  errorStack?: string;
  retryDelayMs?: number;
  workerId?: string;
}

/** A job row and its attempts, as the engine leaves them (for states a test cannot wait for, like 11 minutes running). */
async function insertJob(job: {
  task: string;
  queue: string;
  payload: object;
  key: string;
  status: 'failed' | 'running';
  attempts: AttemptRow[];
  companyId?: string;
  employeeId?: number;
  startedAt?: Date;
  heartbeatAt?: Date;
  workerId?: string;
}): Promise<number> {
  const last = job.attempts.at(-1)!;
  const { rows } = await t.fx.pool.query<{ id: number }>(
    `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, employee_id, started_at, finished_at,
                       heartbeat_at, worker_id, last_error, last_error_kind, last_error_code)
     values ($1, $2, $3, $4::text::"JobStatus", $5, 6, $6, $7, $8, $9, $10, $11, $12, $13, $14::"ErrorKind", $15) returning id`,
    [
      job.task,
      job.queue,
      JSON.stringify(job.payload),
      job.status,
      job.attempts.length,
      job.key,
      job.companyId ?? null,
      job.employeeId ?? null,
      job.startedAt ?? last.startedAt,
      job.status === 'failed' ? last.finishedAt : null,
      job.heartbeatAt ?? null,
      job.workerId ?? null,
      last.errorMessage ?? null,
      last.errorKind ?? null,
      last.errorCode ?? null,
    ],
  );
  const id = rows[0]!.id;
  for (const [i, a] of job.attempts.entries()) {
    await t.fx.pool.query(
      `insert into job_attempts (job_id, attempt, worker_id, task_name, started_at, finished_at, duration_ms, outcome, error_kind, error_code, error_message, error_stack, retry_delay_ms)
       values ($1, $2, $3, $4, $5, $6, $7, $8::"AttemptOutcome", $9::"ErrorKind", $10, $11, $12, $13)`,
      [
        id,
        i + 1,
        a.workerId ?? 'w-test',
        job.task,
        a.startedAt,
        a.finishedAt ?? null,
        a.finishedAt ? a.finishedAt.getTime() - a.startedAt.getTime() : null,
        a.outcome,
        a.errorKind ?? null,
        a.errorCode ?? null,
        a.errorMessage ?? null,
        a.errorStack ?? null,
        a.retryDelayMs ?? null,
      ],
    );
  }
  return id;
}

/** `ms` before `from` (now by default; pass one instant when durations between two must be exact). */
const ago = (ms: number, from = Date.now()) => new Date(from - ms);
const failedNoop = (key: string, attempts = 1) =>
  insertJob({
    task: 'noop',
    queue: 'maintenance',
    payload: { key },
    key: `noop:${key}`,
    status: 'failed',
    attempts: Array.from({ length: attempts }, (_, i) => ({
      outcome: 'failed' as const,
      startedAt: ago(5_000 * (attempts - i)),
      finishedAt: ago(5_000 * (attempts - i) - 100),
      errorKind: 'permanent',
      errorCode: 'test_failure',
      errorMessage: `noop ${key} failed`,
      errorStack: 'Error: x\n    at noop',
    })),
  });

async function jobRow(id: number) {
  const { rows } = await t.fx.pool.query<{ status: string; attempts: number }>(`select status::text, attempts from jobs where id = $1`, [id]);
  return rows[0] ?? null;
}

async function auditOf(action: string) {
  const { rows } = await t.fx.pool.query<{ actor: string; details: Record<string, unknown> }>(
    `select actor, details from audit_log where action = $1 order by id`,
    [action],
  );
  return rows;
}

describe('admin console over HTTP', () => {
  let admin: Admin;
  beforeAll(async () => {
    admin = client(await signIn(t.fx.admin.email, t.fx.admin.password));
  });

  it('job detail: the payload and every attempt with its error and stack', async () => {
    const [a] = t.fx.companies;
    const payload = { companyId: a!.id, employeeId: a!.employeeIds[9], month: t.fx.month, payrollRunId: a!.runId };
    const now = Date.now();
    const first = {
      outcome: 'failed',
      startedAt: ago(120_000, now),
      finishedAt: ago(119_000, now),
      errorKind: 'transient',
      errorCode: 'render_timeout',
      errorMessage: 'render took 31 s',
      errorStack: 'Error: render took 31 s\n    at render (render.ts:10:5)',
      retryDelayMs: 2_000,
    } as const;
    const second = {
      outcome: 'failed',
      startedAt: ago(60_000, now),
      finishedAt: ago(59_000, now),
      errorKind: 'permanent',
      errorCode: 'bad_salary',
      errorMessage: 'salary is negative',
      errorStack: 'Error: salary is negative\n    at slip (slip.ts:3:1)',
    } as const;
    const id = await insertJob({
      task: 'render-slip',
      queue: 'pdf-render',
      payload,
      key: `slip:${t.fx.month}:emp-${payload.employeeId}:detail`,
      status: 'failed',
      companyId: a!.id,
      employeeId: payload.employeeId,
      attempts: [first, second],
    });

    // Enqueued while tracing: the job row keeps the W3C traceparent of its enqueue.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await t.fx.pool.query(`update jobs set traceparent = $2 where id = $1`, [id, `00-${traceId}-00f067aa0ba902b7-01`]);

    const job = await admin.admin.job.query({ id });
    expect(job).toMatchObject({
      traceId,
      traceUrl: TRACE_LINK.replace('{traceId}', traceId),
      id,
      taskName: 'render-slip',
      queue: 'pdf-render',
      status: 'failed',
      payload,
      attempts: 2,
      maxAttempts: 6,
      lastErrorCode: 'bad_salary',
      lastErrorKind: 'permanent',
      companyId: a!.id,
    });
    expect(job.attemptLog.map((x) => [x.attempt, x.outcome, x.errorKind, x.errorCode, x.errorMessage, x.errorStack, x.retryDelayMs, x.durationMs])).toEqual([
      [1, 'failed', 'transient', 'render_timeout', first.errorMessage, first.errorStack, 2_000, 1_000],
      [2, 'failed', 'permanent', 'bad_salary', second.errorMessage, second.errorStack, null, 1_000],
    ]);
    expect(job.attemptLog[0]!.startedAt).toEqual(first.startedAt);
    // A fixture job of another company too: the admin sees every company's jobs.
    const b = t.fx.companies[1]!;
    const other = (await admin.admin.failedList.query({ companyId: b.id, errorCode: 'provider_unavailable' })).rows[0]!;
    const detail = await admin.admin.job.query({ id: other.id });
    expect(detail.payload).toMatchObject({ companyId: b.id, employeeId: other.employeeId });
    expect(detail.attemptLog).toHaveLength(1);
    expect(detail.attemptLog[0]!.errorStack).toContain('at send');
    expect([detail.traceId, detail.traceUrl]).toEqual([null, null]); // enqueued with tracing off
    expect(await errorCode(admin.admin.job.query({ id: 999_999_999 }))).toBe('NOT_FOUND');
  });

  it('discard one: the job and its attempts are deleted, nothing else; the audit log says who and what', async () => {
    const [a] = t.fx.companies;
    const target = (await admin.admin.failedList.query({ companyId: a!.id, errorCode: 'invalid_recipient' })).rows[0]!;
    const before = await admin.admin.failedCount.query({});
    const doneJob = a!.jobIds[0]!; // a render job that is done: not in the DLQ, so not discarded
    expect(await admin.admin.discard.mutate({ ids: [target.id, doneJob] })).toEqual({ discarded: 1 });
    expect(await jobRow(target.id)).toBeNull();
    expect((await t.fx.pool.query(`select count(*)::int as n from job_attempts where job_id = $1`, [target.id])).rows[0].n).toBe(0);
    expect(await jobRow(doneJob)).toMatchObject({ status: 'done' });
    expect(await admin.admin.failedCount.query({})).toBe(before - 1);
    expect((await admin.admin.failedList.query({ limit: 200 })).rows.map((r) => r.id)).not.toContain(target.id);
    const audit = await auditOf('discard-failed-jobs');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor).toBe(`admin:${t.fx.admin.email}`);
    expect((audit[0]!.details.jobs as Array<{ id: unknown; idempotency_key: string }>).map((j) => [Number(j.id), j.idempotency_key])).toEqual([
      [target.id, `slip:${t.fx.month}:emp-${target.employeeId}:email`],
    ]);
    // Discarding it again finds nothing and logs nothing.
    expect(await admin.admin.discard.mutate({ ids: [target.id] })).toEqual({ discarded: 0 });
    expect(await auditOf('discard-failed-jobs')).toHaveLength(1);
  });

  it('discard all that match a filter: exactly the matching jobs go, the others stay; audited', async () => {
    const [a, b] = t.fx.companies as [WebFixture['companies'][number], WebFixture['companies'][number]];
    const filter = { companyId: b.id, errorCode: 'invalid_recipient' };
    const matching = await admin.admin.failedList.query({ ...filter, limit: 200 });
    expect(matching.total).toBeGreaterThan(1);
    const others = {
      bOther: await admin.admin.failedCount.query({ companyId: b.id, errorCode: 'provider_unavailable' }),
      aSame: await admin.admin.failedCount.query({ companyId: a.id, errorCode: 'invalid_recipient' }),
    };
    const all = await admin.admin.failedCount.query({});
    expect(await admin.admin.discardMatching.mutate({ filter, expected: matching.total })).toEqual({ discarded: matching.total });
    expect(await admin.admin.failedCount.query(filter)).toBe(0);
    expect(await admin.admin.failedCount.query({ companyId: b.id, errorCode: 'provider_unavailable' })).toBe(others.bOther);
    expect(await admin.admin.failedCount.query({ companyId: a.id, errorCode: 'invalid_recipient' })).toBe(others.aSame);
    expect(await admin.admin.failedCount.query({})).toBe(all - matching.total);
    const gone = await t.fx.pool.query(`select count(*)::int as n from jobs where id = any($1::bigint[])`, [matching.rows.map((r) => r.id)]);
    expect(gone.rows[0].n).toBe(0);
    const audit = (await auditOf('discard-failed-jobs')).at(-1)!;
    expect(audit.actor).toBe(`admin:${t.fx.admin.email}`);
    expect((audit.details.jobs as Array<{ id: unknown }>).map((j) => Number(j.id)).sort((x, y) => x - y)).toEqual(
      matching.rows.map((r) => r.id).sort((x, y) => x - y),
    );
    // The free-text filter narrows a discard too.
    const aFailed = await admin.admin.failedCount.query({ companyId: a.id });
    const one = (await admin.admin.failedList.query({ companyId: a.id, errorCode: 'provider_unavailable' })).rows[0]!;
    const byText = await admin.admin.failedList.query({ companyId: a.id, q: `for employee ${one.employeeId}` });
    expect(byText.rows.map((r) => r.id)).toContain(one.id);
    expect(byText.total).toBeLessThan(aFailed);
    expect(await admin.admin.discardMatching.mutate({ filter: { companyId: a.id, q: `for employee ${one.employeeId}` }, expected: byText.total })).toEqual({
      discarded: byText.total,
    });
    expect(await jobRow(one.id)).toBeNull();
    expect(await admin.admin.failedCount.query({ companyId: a.id })).toBe(aFailed - byText.total);
  });

  it('stuck jobs: a job running longer than the 10-minute threshold is listed with its worker and heartbeat; a younger one is not', async () => {
    const [a] = t.fx.companies;
    const heartbeatAt = ago(2_000);
    const base = { task: 'send-slip-email', queue: 'send-email', status: 'running', companyId: a!.id, workerId: 'w-stuck-test', heartbeatAt } as const;
    const stuck = await insertJob({
      ...base,
      payload: { n: 1 },
      key: 'stuck-test-1',
      startedAt: ago(11 * 60_000),
      attempts: [{ outcome: 'running', startedAt: ago(11 * 60_000), workerId: 'w-stuck-test' }],
    });
    const young = await insertJob({
      ...base,
      payload: { n: 2 },
      key: 'stuck-test-2',
      startedAt: ago(9 * 60_000),
      attempts: [{ outcome: 'running', startedAt: ago(9 * 60_000), workerId: 'w-stuck-test' }],
    });
    const list = await admin.admin.stuck.query();
    const mine = list.find((j) => j.id === stuck);
    expect(mine).toMatchObject({ taskName: 'send-slip-email', queue: 'send-email', workerId: 'w-stuck-test', heartbeatAt });
    expect(list.map((j) => j.id)).not.toContain(young);
    // The fixture's one job per company that has been running for 15 minutes, and mine: nothing else.
    const fixtureStuck = await t.fx.pool.query<{ id: number }>(`select id from jobs where status = 'running' and started_at < now() - interval '14 minutes'`);
    expect(list.map((j) => j.id).sort((x, y) => x - y)).toEqual([...fixtureStuck.rows.map((r) => r.id), stuck].sort((x, y) => x - y));
    expect(fixtureStuck.rows).toHaveLength(t.fx.companies.length);
    // Oldest first.
    expect(list.map((j) => j.startedAt.getTime())).toEqual(list.map((j) => j.startedAt.getTime()).sort((x, y) => x - y));
  });

  it("schedules: next run times fall on the schedule's wall clock in its own time zone", async () => {
    const [a, , c] = t.fx.companies;
    await t.fx.pool.query(`update companies set time_zone = 'America/New_York' where id = $1`, [c!.id]);
    const now = Date.now();
    const list = await admin.admin.schedules.query();
    const wall = (d: Date, timeZone: string) => {
      const p = Object.fromEntries(
        new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
          .formatToParts(d)
          .map((x) => [x.type, x.value]),
      );
      return `day ${p.day} ${p.hour}:${p.minute}`;
    };
    for (const s of list.filter((x) => x.kind === 'payroll')) {
      expect(s.cron, s.id).toBe('0 2 1 * *');
      expect(s.next, s.id).toHaveLength(3);
      for (const d of s.next) expect(wall(d, s.timeZone), s.id).toBe('day 1 02:00'); // 02:00 on the 1st, there
      expect(s.next[0]!.getTime()).toBeGreaterThan(now);
      expect(s.next.map((d) => d.getTime())).toEqual(s.next.map((d) => d.getTime()).sort((x, y) => x - y));
    }
    const dhaka = list.find((s) => s.id === `payroll:${a!.id}`)!;
    const newYork = list.find((s) => s.id === `payroll:${c!.id}`)!;
    expect([dhaka.timeZone, newYork.timeZone]).toEqual(['Asia/Dhaka', 'America/New_York']);
    expect(dhaka.next.map((d) => d.getUTCHours())).toEqual([20, 20, 20]); // 02:00 +06:00 is 20:00 UTC the day before
    for (const d of newYork.next) expect([6, 7]).toContain(d.getUTCHours()); // 02:00 EDT/EST
    // Built-in schedules run on UTC: the sweeper every 5 minutes.
    const sweep = list.find((s) => s.id === 'sweep-stuck-jobs')!;
    expect(sweep).toMatchObject({ kind: 'builtin', cron: '*/5 * * * *', cronFrom: null, timeZone: 'UTC', job: 'sweep-stuck-jobs' });
    expect(sweep.next.map((d) => [d.getUTCMinutes() % 5, d.getUTCSeconds()])).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    expect(sweep.next[0]!.getTime() - now).toBeLessThanOrEqual(5 * 60_000);
    expect(sweep.next[1]!.getTime() - sweep.next[0]!.getTime()).toBe(5 * 60_000);
  });

  it('"run now" on a built-in schedule enqueues exactly one job of its task, audited', async () => {
    const count = async () => (await t.fx.pool.query(`select count(*)::int as n from jobs where task_name = 'sweep-stuck-jobs'`)).rows[0].n as number;
    const before = await count();
    const t0 = Date.now();
    const result = await admin.admin.runScheduleNow.mutate({ id: 'sweep-stuck-jobs' });
    if (result.outcome === 'already-run') throw new Error('a built-in schedule is never "already run"');
    expect(result.outcome).toBe('enqueued');
    expect(await count()).toBe(before + 1);
    const { rows } = await t.fx.pool.query<{ id: number; queue: string; status: string; payload: { dueAt: string } }>(
      `select id, queue, status::text, payload from jobs where task_name = 'sweep-stuck-jobs'`,
    );
    expect(rows.map((r) => [r.id, r.queue, r.status])).toContainEqual([result.jobId, 'maintenance', 'queued']);
    const dueAt = Date.parse(rows.find((r) => r.id === result.jobId)!.payload.dueAt);
    expect(dueAt).toBeGreaterThanOrEqual(t0 - 5_000);
    expect(dueAt).toBeLessThanOrEqual(Date.now() + 5_000);
    const audit = await auditOf('run-schedule-now');
    expect(audit.map((r) => [r.actor, r.details])).toEqual([
      [`admin:${t.fx.admin.email}`, { scheduleId: 'sweep-stuck-jobs', jobId: result.jobId, created: true }],
    ]);
    expect(await errorCode(admin.admin.runScheduleNow.mutate({ id: 'no-such-schedule' }))).toBe('NOT_FOUND');
    expect(await count()).toBe(before + 1);
  });

  it('retry one: the job goes back to queued and a real worker runs it to done; workers list queue, host, pid, heartbeat; a stopped one shows stopped, a killed one goes silent', async () => {
    const retried = await failedNoop('retry-one', 2);
    const untouched = await failedNoop('stays-failed');
    expect(await admin.admin.retry.mutate({ ids: [retried] })).toEqual({ retried: 1 });
    expect(await jobRow(retried)).toEqual({ status: 'queued', attempts: 0 });
    expect(await jobRow(untouched)).toEqual({ status: 'failed', attempts: 1 });
    expect((await admin.admin.job.query({ id: retried })).status).toBe('queued');
    expect((await admin.admin.failedList.query({ errorCode: 'test_failure' })).rows.map((r) => r.id)).toEqual([untouched]);
    expect((await auditOf('retry-failed-jobs')).map((r) => [r.actor, r.details])).toEqual([[`admin:${t.fx.admin.email}`, { ids: [retried] }]]);

    // SWEEP_CRON overrides the sweeper's */5: the schedules page shows what the schedulers run.
    const env = { DATABASE_URL: t.fx.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '3', HEARTBEAT_MS: '300', SWEEP_CRON: '*/7 * * * *', STALE_HEARTBEAT_MS: '5000' };
    const workers = [spawnWorker({ name: 'maintenance-1', queue: 'maintenance', env }), spawnWorker({ name: 'maintenance-2', queue: 'maintenance', env })];
    started.push(...workers);
    await Promise.all(workers.map((w) => w.ready));
    await expect.poll(async () => (await jobRow(retried))?.status, { timeout: 30_000 }).toBe('done');
    const sweep = (await admin.admin.schedules.query()).find((x) => x.id === 'sweep-stuck-jobs')!;
    expect(sweep.cron).toBe('*/7 * * * *');
    const ours = (await admin.admin.workers.query()).filter((r) => workers.some((w) => w.pid === r.pid)).map((r) => r.id);
    expect(ours).toContain(sweep.cronFrom);
    for (const d of sweep.next) expect(d.getUTCMinutes() % 7).toBe(0);
    const log = (await admin.admin.job.query({ id: retried })).attemptLog;
    // A retried job counts its attempts from 1 again; its history stays in the order it happened.
    expect(log.map((x) => [x.attempt, x.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [1, 'done'],
    ]);

    // The workers page: each process with its queue, host and pid, seen in the last seconds.
    const rows = await admin.admin.workers.query();
    const byPid = (pid: number) => rows.find((r) => r.pid === pid);
    for (const w of workers) {
      expect(byPid(w.pid), w.name).toMatchObject({ queue: 'maintenance', host: os.hostname(), stoppedAt: null, state: 'alive', silentAfterMs: 5000 });
      expect(Date.now() - byPid(w.pid)!.lastSeen.getTime()).toBeLessThan(5_000);
    }
    expect([byPid(workers[0]!.pid)!.id, byPid(workers[1]!.pid)!.id]).toContain(log.at(-1)!.workerId);
    // Its heartbeat moves last seen on.
    const seen = byPid(workers[0]!.pid)!.lastSeen.getTime();
    await expect
      .poll(async () => (await admin.admin.workers.query()).find((r) => r.pid === workers[0]!.pid)!.lastSeen.getTime(), { timeout: 5_000 })
      .toBeGreaterThan(seen);

    // One is stopped (SIGTERM): it says so. The other dies (SIGKILL): its last seen stays where it was,
    // so the page shows it silent once that is over a minute old.
    workers[0]!.signal('SIGKILL');
    await workers[0]!.exited;
    await workers[1]!.stop(10_000);
    const after = await admin.admin.workers.query();
    const stopped = after.find((r) => r.pid === workers[1]!.pid)!;
    const killed = after.find((r) => r.pid === workers[0]!.pid)!;
    expect(stopped).toMatchObject({ state: 'stopped' });
    expect(stopped.stoppedAt).not.toBeNull();
    expect(killed.stoppedAt).toBeNull();
    await new Promise((r) => setTimeout(r, 1_500)); // five heartbeats' time
    expect((await admin.admin.workers.query()).find((r) => r.pid === workers[0]!.pid)!.lastSeen).toEqual(killed.lastSeen);
    // Silent once its heartbeat is older than the schedulers' STALE_HEARTBEAT_MS (5 s here), when the sweeper takes its jobs back.
    await expect.poll(async () => (await admin.admin.workers.query()).find((r) => r.pid === workers[0]!.pid)!.state, { timeout: 15_000 }).toBe('silent');
    // Alive workers are listed first, then the stopped ones.
    expect(after.findIndex((r) => r.pid === workers[0]!.pid)).toBeLessThan(after.findIndex((r) => r.pid === workers[1]!.pid));
  }, 120_000);
});

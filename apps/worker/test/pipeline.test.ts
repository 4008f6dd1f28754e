/**
 * The payroll night end to end on a small N: real worker processes (scheduler, pdf-render,
 * send-email), real HTTP to the SendGrid-compatible simulator through @sendgrid/mail, a
 * real PostgreSQL. Faults: a 503 window, lost acks, invalid addresses, two schedulers. The
 * bank poll: bank-poll.test.ts.
 */
import { createTestDatabase, seedDatabase, writeAuditEntry, type TestDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { startBankSimulator, startProviderSimulator, type BankSimulator, type ProviderSimulator } from '@beton/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_SCHEDULING } from '../../../scripts/lib/fast-scheduling.ts';
import { waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll, type Managed } from '../../../scripts/lib/processes.ts';

// The schedulers' run (first test) pays last month; the manual run pays the month before.
const MONTH = '2026-10';

describe('payroll pipeline (processes, HTTP, PostgreSQL)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let bank: BankSimulator;
  let jobs: JobClient<BetonJobs>;
  const workers: Managed[] = [];
  let env: NodeJS.ProcessEnv;

  // The slips' queues; the runs' submit-bank-transfers jobs (maintenance) wait for a scheduler
  // once the schedulers stop (the bank poll has its own test: bank-poll.test.ts).
  const settled = async () => {
    const { rows } = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from jobs where status in ('queued', 'running', 'retrying') and queue <> 'maintenance'`,
    );
    return rows[0]!.n === 0;
  };

  beforeAll(async () => {
    db = await createTestDatabase('pipeline');
    await seedDatabase(db.pool, { employees: 90, companies: 3, invalidRate: 0.04, seed: 7 });
    provider = await startProviderSimulator({
      scheduledSends: FAST_SCHEDULING.simulator,
      latencyMs: 40,
      latencySpreadMs: 20,
      ratePerSecond: 40,
      activityApi: true,
      activityPerMinute: 100_000,
      storeAttachmentBytes: true,
    });
    bank = await startBankSimulator({});
    jobs = createJobClient(db.pool, jobDefinitions);
    env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      BANK_API_URL: bank.url,
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '150',
      // Lost acks are resolved through the Activity API here (no webhook receiver in this test).
      EMAIL_ACTIVITY_API: 'on',
      EMAIL_ACTIVITY_PER_MINUTE: '6000',
      // Scheduled sends in seconds (the simulator's cancel cutoff shortened to match).
      ...FAST_SCHEDULING.env,
      SHUTDOWN_GRACE_MS: '30000',
      HEARTBEAT_MS: '1000',
      SCHEDULE_TICK_MS: '500',
      DB_POOL_MAX: '8',
    };
    workers.push(spawnWorker({ queue: 'pdf-render', env: { ...env, WORKER_CONCURRENCY: '2' } }));
    workers.push(spawnWorker({ queue: 'send-email', env }));
    await Promise.all(workers.map((w) => w.ready));
  }, 120_000);

  afterAll(async () => {
    await stopAll(10_000);
    await provider?.close();
    await bank?.close();
    await db?.drop();
  });

  it('two schedulers started at once create one payroll run per company and exactly N render jobs', async () => {
    // Every company's schedule fires each minute; the tick looks back 5 minutes, so both
    // schedulers see a due time at once and race for it.
    await db.pool.query(`update companies set payroll_schedule = '* * * * *', time_zone = 'Asia/Dhaka'`);
    // Each scheduler's log (info): the due times it enqueued, those it found taken by the other.
    const logs: Record<
      string,
      Array<{ msg: string; enqueued?: Array<{ scheduleId: string; dueAt: string }>; skipped?: Array<{ scheduleId: string; dueAt: string; by: string }> }>
    > = { 'scheduler-a': [], 'scheduler-b': [] };
    const spawnScheduler = (id: string) =>
      spawnWorker({
        name: id,
        queue: 'maintenance',
        env: { ...env, LOG_LEVEL: 'info' },
        args: ['--worker-id', id],
        onLine: (line) => {
          if (line.startsWith('{')) logs[id]!.push(JSON.parse(line));
        },
      });
    const schedulers = [spawnScheduler('scheduler-a'), spawnScheduler('scheduler-b')];
    workers.push(...schedulers);
    await Promise.all(schedulers.map((s) => s.ready));
    const month = await waitUntil(
      'payroll runs',
      async () => {
        const { rows } = await db.pool.query<{ month: string; n: number }>(`select month, count(*)::int as n from payroll_runs group by month`);
        return rows.length === 1 && rows[0]!.n === 3 ? rows[0]!.month : null;
      },
      90_000,
    );
    // The race happened: every company due time one scheduler enqueued, the other one met in
    // its own tick and skipped, naming the winner.
    const ENQUEUED = 'schedules enqueued';
    const SKIPPED = 'schedules already enqueued by another scheduler: skipped';
    const payrollDueTimes = (id: string, msg: string): Array<{ scheduleId: string; dueAt: string; by?: string }> =>
      logs[id]!.filter((l) => l.msg === msg)
        .flatMap((l) => (msg === ENQUEUED ? l.enqueued : l.skipped) ?? [])
        .filter((e) => e.scheduleId.startsWith('payroll:'));
    const other = (id: string) => (id === 'scheduler-a' ? 'scheduler-b' : 'scheduler-a');
    const pairsNow = () =>
      ['scheduler-a', 'scheduler-b'].flatMap((winner) => {
        const skipped = payrollDueTimes(other(winner), SKIPPED);
        return payrollDueTimes(winner, ENQUEUED).map((e) => ({
          ...e,
          winner,
          lost: skipped.some((s) => s.scheduleId === e.scheduleId && s.dueAt === e.dueAt && s.by === winner),
        }));
      });
    const raced = await waitUntil(
      'both schedulers ticked over the same due times',
      async () => {
        const pairs = pairsNow();
        return pairs.length > 0 && pairs.every((p) => p.lost) ? pairs : null;
      },
      20_000,
    ).catch((error: Error) => {
      // What did not match, and what the schedulers said meanwhile other than their ticks.
      const unmatched = pairsNow().filter((p) => !p.lost);
      const other = Object.entries(logs).flatMap(([id, lines]) =>
        lines.filter((l) => l.msg !== ENQUEUED && l.msg !== SKIPPED).map((l) => `${id}: ${JSON.stringify(l)}`),
      );
      throw new Error(`${error.message}\nnot matched: ${JSON.stringify(unmatched)}\nthe schedulers' other lines:\n${other.slice(-40).join('\n')}`);
    });
    expect(new Set(raced.map((p) => p.scheduleId)).size).toBe(3);
    const keys = raced.map((p) => `${p.scheduleId}@${p.dueAt}`);
    expect(new Set(keys).size).toBe(keys.length); // no due time enqueued twice
    await new Promise((r) => setTimeout(r, 2000)); // let the second scheduler's ticks run too
    const fanouts = Object.values(logs)
      .flat()
      .filter((l) => /^payroll run (created|exists|locked)$/.test(l.msg));
    expect(fanouts.map((l) => l.msg)).toEqual(['payroll run created', 'payroll run created', 'payroll run created']);
    const runs = await db.pool.query<{ company_id: string; n: number }>(`select company_id, count(*)::int as n from payroll_runs group by company_id`);
    expect(runs.rows).toHaveLength(3);
    expect(runs.rows.every((r) => r.n === 1)).toBe(true);
    const renders = await db.pool.query<{ n: number; distinct: number }>(
      `select count(*)::int as n, count(distinct employee_id)::int as distinct from jobs where task_name = 'render-slip' and payload->>'month' = $1`,
      [month],
    );
    expect(renders.rows[0]).toEqual({ n: 90, distinct: 90 });
    await Promise.all(schedulers.map((s) => s.stop(20_000)));
    // Their logs complete: every skip names a due time the other scheduler enqueued.
    for (const id of ['scheduler-a', 'scheduler-b']) {
      const won = payrollDueTimes(other(id), ENQUEUED).map((e) => `${e.scheduleId}@${e.dueAt}`);
      for (const s of payrollDueTimes(id, SKIPPED)) expect(won).toContain(`${s.scheduleId}@${s.dueAt}`);
    }
    await waitUntil('first month settled', settled, 120_000);
  }, 180_000);

  it('delivers exactly one slip per valid employee through a 503 window and 5 % lost acks; invalid addresses fail once with the reason', async () => {
    provider.reset();
    provider.unavailableFor(3_000);
    provider.setDropAckFraction(0.05);
    const summary = await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'test' }, MONTH);
    expect(summary.enqueued).toBe(90);
    await waitUntil('run settled', settled, 150_000);
    provider.setDropAckFraction(0);

    const employees = await db.pool.query<{ id: number; email: string }>('select id, email from employees order by id');
    const invalid = employees.rows.filter((e) => !/^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$/.test(e.email));
    expect(invalid.length).toBeGreaterThan(0);
    for (const e of employees.rows) {
      const got = provider.messages({ customArgs: { idempotency_key: `slip:${MONTH}:emp-${e.id}` } });
      expect(got.length, `messages for employee ${e.id} <${e.email}>`).toBe(invalid.includes(e) ? 0 : 1);
    }
    const failed = await db.pool.query<{ employee_id: number; attempts: number; last_error_code: string; last_error: string }>(
      `select employee_id, attempts, last_error_code, last_error from jobs where task_name = 'send-slip-email' and payload->>'month' = $1 and status = 'failed'`,
      [MONTH],
    );
    expect(failed.rows.map((r) => r.employee_id).sort()).toEqual(invalid.map((e) => e.id).sort());
    for (const f of failed.rows) {
      // Attempts that met the 503 window were transient; the provider's 400 ended the job at
      // once: exactly one invalid_recipient attempt, and it is the last one.
      const history = await db.pool.query<{ outcome: string; error_code: string }>(
        `select a.outcome, a.error_code from job_attempts a join jobs j on j.id = a.job_id
         where j.task_name = 'send-slip-email' and j.employee_id = $1 and j.payload->>'month' = $2 order by a.attempt`,
        [f.employee_id, MONTH],
      );
      expect(history.rows.at(-1)).toEqual({ outcome: 'failed', error_code: 'invalid_recipient' });
      expect(history.rows.slice(0, -1).every((a) => a.outcome === 'retrying' && a.error_code === 'provider_unavailable')).toBe(true);
      expect(f.attempts).toBe(history.rows.length);
      expect(f.last_error_code).toBe('invalid_recipient');
      expect(f.last_error).toMatch(/valid address/);
    }
    const stats = provider.stats();
    expect(stats.responses['503'] ?? 0).toBeGreaterThan(0);
    expect(stats.responses['429'] ?? 0).toBe(0);
    expect(stats.droppedAcks).toBeGreaterThan(0);
  }, 200_000);

  it('a fixed address retried from the DLQ is delivered exactly once', async () => {
    const failed = await db.pool.query<{ id: number; employee_id: number }>(
      `select id, employee_id from jobs where task_name = 'send-slip-email' and payload->>'month' = $1 and status = 'failed' order by id limit 1`,
      [MONTH],
    );
    const job = failed.rows[0]!;
    await db.pool.query(`update employees set email = 'fixed.' || id || '@beton-fixed.example.com' where id = $1`, [job.employee_id]);
    const { retryFailedJobs } = await import('@beton/jobs');
    expect(await retryFailedJobs(db.pool, { ids: [job.id] }, { actor: 'test', audit: writeAuditEntry })).toEqual([job.id]);
    await waitUntil('retried job done', async () => (await db.pool.query(`select status from jobs where id = $1`, [job.id])).rows[0].status === 'done', 90_000);
    expect(provider.messages({ customArgs: { idempotency_key: `slip:${MONTH}:emp-${job.employee_id}` } })).toHaveLength(1);
    expect(provider.messages({ to: `fixed.${job.employee_id}@beton-fixed.example.com` })).toHaveLength(1);
  }, 60_000);
});

/**
 * No second slip from silence (docs/exactly-once.md, "Resend only on proof"), judged from outside
 * by what the SendGrid-compatible simulator keeps: real worker processes (a pdf-render worker,
 * three send-email workers, a scheduler that runs the settle job and the sweeper), real HTTP,
 * PostgreSQL. While the monthly run sends, answers are lost in every way the issue names — the
 * provider slower than the client's timeout, connections reset after acceptance, a send-email
 * worker SIGKILLed with requests on the wire — the Email Activity API fails throughout and no
 * webhook receiver runs (down for the whole run, as if for 30 minutes). Nothing can be known, so
 * every ambiguous send's batch is cancelled before its cutoff and sent again. At the end: exactly
 * one email per employee, none missing, none failed, the unknown outcomes all settled.
 *
 * Before this design an unknown outcome with no evidence was sent again once a settle window
 * passed (the drill's 3–7 duplicates in ~5,000 slips): here every one of them would be a second
 * email. The cancel cutoff is seconds instead of 10 minutes (scripts/lib/fast-scheduling.ts).
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock } from '@beton/jobs';
import { runCompanyPayroll } from '@beton/payroll';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_SCHEDULING } from '../../../scripts/lib/fast-scheduling.ts';
import { sleep, waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll, type Managed } from '../../../scripts/lib/processes.ts';

const EMPLOYEES = 150;
const MONTH = '2026-10';

describe('a send whose answer was lost is sent again only on proof (processes, HTTP, PostgreSQL)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let companyId: string;
  let env: Record<string, string>;
  const emailWorkers: Managed[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('resend-on-proof');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Proof Ltd') returning id`)).rows[0]!.id;
    await db.pool.query(
      `insert into employees (company_id, code, name_latin, name_bengali, email, salary, bank_account)
       select $1, 'E' || g, 'Employee ' || g, 'কর্মী ' || g, 'employee-' || g || '@proof.example',
              '{"basic": 30000, "houseRent": 12000, "medical": 2000, "conveyance": 1500, "tax": 1200, "providentFund": 3000}'::jsonb, '0100' || g
       from generate_series(1, ${EMPLOYEES}) g`,
      [companyId],
    );
    provider = await startProviderSimulator({
      latencyMs: 150,
      latencySpreadMs: 50,
      activityApi: true,
      activityPerMinute: 600,
      storeAttachmentBytes: false,
      scheduledSends: FAST_SCHEDULING.simulator,
    });
    env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '100',
      HEARTBEAT_MS: '500',
      DB_POOL_MAX: '5',
      EMAIL_REQUEST_TIMEOUT_MS: '1500',
      EMAIL_RATE_LIMIT: '40',
      EMAIL_ACTIVITY_API: 'on',
      EMAIL_ACTIVITY_PER_MINUTE: '300',
      ...FAST_SCHEDULING.env,
    };
    const start = async (queue: string, extra: Record<string, string> = {}) => {
      const w = spawnWorker({ name: queue, queue, env: { ...env, ...extra }, readyTimeoutMs: 150_000 });
      await w.ready;
      return w;
    };
    const [, , ...emails] = await Promise.all([
      start('pdf-render', { WORKER_CONCURRENCY: '2' }),
      start('maintenance', { SWEEP_CRON: '*/2 * * * * *', SCHEDULE_TICK_MS: '1000', STALE_HEARTBEAT_MS: '3000' }),
      start('send-email'),
      start('send-email'),
      start('send-email'),
    ]);
    emailWorkers.push(...emails);
  }, 300_000);

  afterAll(async () => {
    await stopAll(10_000);
    await provider?.close();
    await db?.drop();
  });

  it('100+ accepted sends with lost answers, a SIGKILLed sender, Activity failing, no webhook: exactly one email per employee', async () => {
    // The Activity API fails for the whole run; no webhook receiver is configured at all.
    provider.setFaults({ activityUnavailableForMs: 600_000, extraLatencyMs: 2500 }); // slower than the client's 1.5 s
    const jobs = createJobClient(db.pool, jobDefinitions);
    await runCompanyPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'test' }, companyId, MONTH);
    const accepted = () => provider.stats().accepted;
    await waitUntil('60 sends accepted while the client times out', async () => accepted() >= 60, 120_000, 200);
    // Then resets after acceptance, and a sender killed with its requests on the wire.
    provider.setFaults({ extraLatencyMs: 400, dropAckFraction: 0.5 });
    await waitUntil('100 sends accepted', async () => accepted() >= 100, 120_000, 200);
    emailWorkers[0]!.signal('SIGKILL');
    await waitUntil('every slip accepted once', async () => accepted() >= EMPLOYEES, 180_000, 200);
    provider.setFaults({ extraLatencyMs: 0, dropAckFraction: 0 });
    const lost = provider.stats().droppedAcks;

    // Everything settles: no open job, no unknown outcome, no batch waiting for its decision.
    const state = async () =>
      (
        await db.pool.query<{ open_jobs: number; failed: number; unknown: number; open_batches: number; proof: number }>(
          `select (select count(*)::int from jobs where task_name in ('render-slip', 'send-slip-email') and status in ('queued', 'running', 'retrying')) as open_jobs,
                  (select count(*)::int from jobs where task_name in ('render-slip', 'send-slip-email') and status = 'failed') as failed,
                  (select count(*)::int from email_unknown_outcomes where settled_at is null) as unknown,
                  (select count(*)::int from email_batches where state = 'open') as open_batches,
                  (select coalesce(sum(resent_on_proof), 0)::int from email_deliveries) as proof`,
        )
      ).rows[0]!;
    let lastLog = 0;
    const diagnose = async () => {
      const batches = await db.pool.query(`select state, count(*)::int as n, min(note) as note from email_batches group by 1`);
      const unknowns = await db.pool.query(
        `select u.settled_by, b.state, count(*)::int as n, max(u.lookup_error) as err from email_unknown_outcomes u left join email_batches b on b.batch_id = u.batch_id group by 1, 2`,
      );
      const jobsNow = await db.pool.query(`select task_name, status::text, last_error_code, count(*)::int as n from jobs group by 1, 2, 3 order by 1, 2`);
      console.log(JSON.stringify({ state: await state(), batches: batches.rows, unknowns: unknowns.rows, jobs: jobsNow.rows }));
    };
    await waitUntil(
      'every unknown outcome settled and every batch decided',
      async () => {
        const s = await state();
        if (Date.now() - lastLog > 15_000) {
          lastLog = Date.now();
          await diagnose();
        }
        return s.open_jobs === 0 && s.unknown === 0 && s.open_batches === 0 && s.proof > 0;
      },
      240_000,
      500,
    ).catch(async (error: unknown) => {
      await diagnose();
      throw error;
    });
    const lastSendAt = (await db.pool.query<{ t: Date }>(`select max(send_at) as t from email_batches`)).rows[0]!.t;
    await sleep(Math.max(0, lastSendAt.getTime() - Date.now()) + 500);

    const perEmployee = new Map<string, number>();
    for (const m of provider.messages()) {
      const key = m.customArgs['idempotency_key'] ?? '';
      perEmployee.set(key, (perEmployee.get(key) ?? 0) + 1);
    }
    const ids = (await db.pool.query<{ id: number }>(`select id from employees where company_id = $1`, [companyId])).rows.map((r) => r.id);
    const keys = ids.map((id) => `slip:${MONTH}:emp-${id}`);
    const s = await state();
    const stats = provider.stats();
    console.log(
      `resend-on-proof: ${stats.accepted} accepted, ${lost} lost acks, ${stats.scheduled.cancellations} batches cancelled, ${stats.scheduled.discarded} discarded, ${s.proof} resent on proof`,
    );
    expect(keys.filter((k) => (perEmployee.get(k) ?? 0) === 0)).toEqual([]); // none missing
    expect(keys.filter((k) => (perEmployee.get(k) ?? 0) > 1)).toEqual([]); // none twice
    expect(s.failed).toBe(0);
    expect(provider.messages().every((m) => m.state === 'sent')).toBe(true);
    expect(stats.scheduled.discarded).toBeGreaterThan(0); // the cancelled first copies never went out
    expect(lost).toBeGreaterThan(0);
  }, 600_000);
});

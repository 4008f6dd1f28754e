/**
 * Resend only on proof (docs/exactly-once.md). Bulk slips go out as scheduled sends of their
 * window's batch; 100+ of them are accepted by the provider with their answers lost (the provider
 * slower than the client's timeout, connections reset after acceptance) while the webhook
 * receiver is down and the Email Activity API fails. No evidence can come, so the settle job
 * cancels the batch before its cutoff — SendGrid discards a cancelled batch's messages — and sends
 * every email of it again under a new batch. Judged from the simulator's store: exactly one email
 * per employee, none missing, the first copies discarded. Before this design, an unknown outcome
 * with no evidence was sent again when a timer ran out: a second email in the employee's inbox.
 *
 * The cancel cutoff is 1 s here instead of SendGrid's 10 minutes (the simulator's option, the
 * product's EMAIL_CANCEL_CUTOFF_MS); everything else is as in production.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { createJobClient } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverEmail } from '../src/email.ts';
import { payrollJobs, slipKey } from '../src/jobs/index.ts';
import { createMailer, type Mailer } from '../src/mailer.ts';
import { createBatchSource, schedulingProblem, type SchedulingSettings } from '../src/scheduling.ts';
import { resendUnconfirmed } from '../src/actions.ts';
import { settleEmailOutcomes } from '../src/settle.ts';

// Seconds instead of minutes, with room for a loaded machine: 6 s for a window's last answers, a settle run every second.
const SCHEDULING: SchedulingSettings = { windowMs: 4000, leadMs: 12_000, cancelCutoffMs: 1000, clockSkewMs: 200, quietMs: 6000, settleEveryMs: 1000 };
const N = 120;
const MONTH = '2026-11';

describe('a send whose answer was lost is sent again only on proof (scheduled sends, batch cancelled)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let mailer: Mailer;
  let companyId: string;
  const jobs = () => createJobClient(db.pool, payrollJobs);

  beforeAll(async () => {
    db = await createTestDatabase('resend-on-proof');
    provider = await startProviderSimulator({
      latencyMs: 20,
      latencySpreadMs: 0,
      ratePerSecond: 10_000,
      activityApi: true,
      activityPerMinute: 10_000,
      scheduledSends: { cancelCutoffMs: SCHEDULING.cancelCutoffMs },
      storeAttachmentBytes: false,
    });
    // The client gives up after 1 s: a provider taking 1.5 s accepts what the client thinks lost.
    mailer = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, timeoutMs: 1000 });
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Proof Ltd') returning id`)).rows[0]!.id;
  });
  afterAll(async () => {
    await provider?.close();
    await db?.drop();
  });

  const email = (employeeId: number) => ({
    to: `employee-${employeeId}@proof.example`,
    subject: 'slip',
    text: 't',
    html: '<p>t</p>',
    idempotencyKey: slipKey({ month: MONTH, employeeId }),
    links: { companyId, employeeId },
  });

  /** What a send-slip-email job does for its payload (the worker's handler, minus the PDF). */
  const send = (batches: ReturnType<typeof createBatchSource>, employeeId: number) =>
    deliverEmail({ pool: db.pool, mailer }, email(employeeId), { batch: () => batches.current() });

  it('the rule holds for the settings', () => {
    expect(schedulingProblem(SCHEDULING)).toBeNull();
    expect(schedulingProblem({ ...SCHEDULING, leadMs: 3000 })).toMatch(/EMAIL_SEND_LEAD_MS/);
    expect(schedulingProblem({ ...SCHEDULING, windowMs: 500 })).toMatch(/EMAIL_BATCH_WINDOW_MS/);
  });

  it('100+ accepted sends with lost answers, no webhook, Activity failing: each employee gets exactly one email', async () => {
    const batches = createBatchSource({ pool: db.pool, mailer }, SCHEDULING);
    const client = jobs();
    // The monthly run's jobs (a proof resend is a new job with the same payload).
    for (let id = 1; id <= N; id++) await client.enqueue('send-slip-email', { companyId, employeeId: id, month: MONTH });
    // The Activity API fails for the whole test and no webhook event is ever relayed (receiver down).
    provider.setFaults({ activityUnavailableForMs: 600_000 });

    // 60 answers lost by a provider slower than the client's timeout; 50 by a connection reset
    // after acceptance; 10 answered.
    provider.setExtraLatency(1500);
    const slow = await Promise.all(Array.from({ length: 60 }, (_, i) => send(batches, i + 1)));
    await sleep(1700); // the slow ones are accepted after the client gave up
    provider.setExtraLatency(0);
    provider.dropNextAcks(50);
    const reset = await Promise.all(Array.from({ length: 60 }, (_, i) => send(batches, 61 + i)));
    const results = [...slow, ...reset];
    expect(results.filter((r) => !r.sent)).toHaveLength(110);
    expect(provider.messages().length).toBe(N);
    // Looking again changes nothing: the job ends with the unknown recorded, nothing sent again.
    expect((await send(batches, 1)).sent).toBe(false);
    expect(provider.stats().accepted).toBe(N);

    const unknown = await db.pool.query<{ n: number }>(`select count(*)::int as n from email_unknown_outcomes where settled_at is null`);
    expect(unknown.rows[0]!.n).toBe(110);

    // The settle job every 0.5 s; the proof resends run like their jobs would.
    // The Activity API is asked (it answers 503) on every run: still unknown, never "not sent".
    const activity = { lookup: (emails: ReadonlyArray<{ key: string; to: string; batchId?: string | null }>) => mailer.findAccepted(emails) };
    const settle = () => settleEmailOutcomes({ pool: db.pool, mailer, jobs: client, activity }, { scheduling: SCHEDULING, lookupBudgetMs: 200 });
    let cancelled = 0;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await settle();
      cancelled += r.cancelled;
      const resends = await db.pool.query<{ id: number; employee_id: number }>(
        `select id::int, (payload->>'employeeId')::int as employee_id from jobs where task_name = 'send-slip-email' and status = 'queued' and idempotency_key like '%:proof-%'`,
      );
      for (const job of resends.rows) {
        const result = await send(batches, job.employee_id);
        expect(result.sent).toBe(true);
        await db.pool.query(`update jobs set status = 'done' where id = $1`, [job.id]);
      }
      const open = await db.pool.query<{ n: number }>(`select count(*)::int as n from email_batches where state = 'open'`);
      if (cancelled > 0 && r.open === 0 && open.rows[0]!.n === 0 && resends.rows.length === 0) break;
      if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(r)}`);
      await sleep(SCHEDULING.settleEveryMs);
    }

    // Every send_at passes: the cancelled batch's messages are discarded, the new batch's sent.
    const lastSendAt = await db.pool.query<{ t: Date }>(`select max(send_at) as t from email_batches`);
    await sleep(Math.max(0, lastSendAt.rows[0]!.t.getTime() - Date.now()) + 300);
    const perKey = new Map<string, number>();
    for (const m of provider.messages()) perKey.set(m.customArgs['idempotency_key']!, (perKey.get(m.customArgs['idempotency_key']!) ?? 0) + 1);
    const keys = Array.from({ length: N }, (_, i) => slipKey({ month: MONTH, employeeId: i + 1 }));
    expect(keys.filter((k) => (perKey.get(k) ?? 0) === 0)).toEqual([]); // none missing
    expect(keys.filter((k) => (perKey.get(k) ?? 0) > 1)).toEqual([]); // none twice
    expect(provider.messages().every((m) => m.state === 'sent')).toBe(true);
    const stats = provider.stats().scheduled;
    // The first copies of every unknown outcome, and of the answered sends in the same windows: never sent.
    expect(stats.discarded).toBeGreaterThanOrEqual(110);
    expect(stats.cancellations).toBeGreaterThanOrEqual(1);
    const counts = await db.pool.query<{ proof: number; person: number; unknown: number }>(
      `select coalesce(sum(resent_on_proof), 0)::int as proof, coalesce(sum(resent_by_person), 0)::int as person,
              count(*) filter (where outcome_unknown_since is not null)::int as unknown from email_deliveries`,
    );
    expect(counts.rows[0]!.proof).toBeGreaterThanOrEqual(110);
    expect(counts.rows[0]!.person).toBe(0);
    expect(counts.rows[0]!.unknown).toBe(0);
  }, 120_000);

  it('an interactive send with a lost answer and no evidence is unconfirmed, never sent again by a timer; a person may send it again (audited)', async () => {
    provider.reset();
    provider.setFaults({ activityUnavailableForMs: 600_000 });
    const client = jobs();
    const employeeId = 500;
    await client.enqueue('send-slip-email', { companyId, employeeId, month: MONTH });
    provider.dropNextAcks(1);
    const first = await deliverEmail({ pool: db.pool, mailer }, email(employeeId)); // no batch: sent at once
    expect(first.sent).toBe(false);
    for (let i = 0; i < 3; i++) {
      const r = await settleEmailOutcomes({ pool: db.pool, mailer, jobs: client }, { scheduling: SCHEDULING });
      expect(r.unconfirmed).toBeGreaterThanOrEqual(1);
      const mine = await db.pool.query(`select settled_at from email_unknown_outcomes where idempotency_key = $1`, [email(employeeId).idempotencyKey]);
      expect(mine.rows).toEqual([{ settled_at: null }]);
      expect((await deliverEmail({ pool: db.pool, mailer }, email(employeeId))).sent).toBe(false);
    }
    expect(provider.messages({ customArgs: { idempotency_key: email(employeeId).idempotencyKey } })).toHaveLength(1);
    const { jobKey } = await resendUnconfirmed({ pool: db.pool, jobs: client }, { key: email(employeeId).idempotencyKey, actor: 'admin:ops@beton.example' });
    expect(jobKey).toMatch(/:person-1$/);
    const job = await db.pool.query<{ payload: { immediate?: boolean } }>(`select payload from jobs where idempotency_key = $1`, [jobKey]);
    expect(job.rows[0]!.payload.immediate).toBe(true);
    const audit = await db.pool.query<{ details: { mayDuplicate: boolean } }>(`select details from audit_log where action = 'resend-unconfirmed-email'`);
    expect(audit.rows[0]!.details.mayDuplicate).toBe(true);
    // Settled by the person; a second press is refused.
    await expect(
      resendUnconfirmed({ pool: db.pool, jobs: client }, { key: email(employeeId).idempotencyKey, actor: 'admin:ops@beton.example' }),
    ).rejects.toThrow(/not an unconfirmed email/);
  });
});

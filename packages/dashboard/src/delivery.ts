/**
 * Delivery truth for HR and admins (issue 16, R12): what SendGrid's Event Webhook said about
 * each slip — delivered, bounced, dropped, or still awaiting confirmation — the addresses HR
 * must fix, each slip's events, and the send-email queue's account-fault pause.
 */
import type { Pool } from '@beton/db';
import { queuePauses, resumeQueue } from '@beton/jobs/client';
import { FINAL_STATES, webhookCounts } from '@beton/payroll/events';
import { slipDeadline } from '@beton/payroll/month';
import { z } from 'zod';
import { notFound } from './errors.ts';

export const deliveryCountsOutput = z.object({
  delivered: z.number(),
  bounced: z.number(),
  dropped: z.number(),
  spamReports: z.number(),
  awaiting: z.number(),
  /** Sends whose outcome is unknown with no batch left to cancel and no evidence: a person decides. */
  unconfirmed: z.number(),
  /** Sent again because their batch was cancelled (proof the first send is discarded). */
  resentOnProof: z.number(),
  /** Sent again by an HR manager or admin while unconfirmed (may have arrived twice). */
  resentByPerson: z.number(),
});
export type DeliveryCounts = z.infer<typeof deliveryCountsOutput>;

/** A run's slips by delivery truth. `awaiting`: accepted (or its send's outcome unknown) with no final event yet. */
export async function runDeliveryCounts(pool: Pool, companyId: string, runId: string): Promise<DeliveryCounts> {
  const run = await pool.query(`select 1 from payroll_runs where id = $1 and company_id = $2`, [runId, companyId]);
  if (!run.rowCount) throw notFound('payroll run');
  const { rows } = await pool.query<DeliveryCounts>(
    `select count(*) filter (where event_state = 'delivered')::int as delivered, count(*) filter (where event_state = 'bounced')::int as bounced,
            count(*) filter (where event_state = 'dropped')::int as dropped, count(*) filter (where event_state = 'spam_report')::int as "spamReports",
            count(*) filter (where (status = 'sent' or outcome_unknown_since is not null) and (event_state is null or not (event_state = any($2::text[]))))::int as awaiting,
            count(*) filter (where exists (select 1 from email_unknown_outcomes u left join email_batches b on b.batch_id = u.batch_id
                                           where u.idempotency_key = d.idempotency_key and u.settled_at is null and b.state is distinct from 'open'))::int as unconfirmed,
            coalesce(sum(resent_on_proof), 0)::int as "resentOnProof", coalesce(sum(resent_by_person), 0)::int as "resentByPerson"
     from email_deliveries d where payroll_run_id = $1`,
    [runId, FINAL_STATES],
  );
  return rows[0]!;
}

export const addressToFixOutput = z.object({
  employeeId: z.number(),
  name: z.string(),
  email: z.string(),
  state: z.string(),
  reason: z.string().nullable(),
  at: z.date().nullable(),
});

/** Employees whose latest email bounced or was dropped, to an address they still have: HR fixes these, then resends. */
export async function addressesToFix(pool: Pool, companyId: string): Promise<Array<z.infer<typeof addressToFixOutput>>> {
  const { rows } = await pool.query<z.infer<typeof addressToFixOutput>>(
    `select distinct on (e.id) e.id as "employeeId", e.name_latin as name, e.email, d.event_state as state, d.event_reason as reason, d.event_at as at
     from email_deliveries d join employees e on e.id = d.employee_id
     where d.company_id = $1 and d.event_state in ('bounced', 'dropped') and lower(d.recipient) = lower(e.email)
     order by e.id, d.event_at desc nulls last limit 200`,
    [companyId],
  );
  return rows;
}

export const deliveryEventOutput = z.object({ key: z.string(), event: z.string(), email: z.string(), reason: z.string().nullable(), at: z.date() });

/** Every stored Event Webhook event of an employee's emails, oldest first. */
export async function employeeDeliveryEvents(pool: Pool, companyId: string, employeeId: number): Promise<Array<z.infer<typeof deliveryEventOutput>>> {
  const e = await pool.query(`select 1 from employees where id = $1 and company_id = $2`, [employeeId, companyId]);
  if (!e.rowCount) throw notFound('employee');
  const { rows } = await pool.query<z.infer<typeof deliveryEventOutput>>(
    `select ev.idempotency_key as key, ev.event, ev.email, ev.reason, ev.occurred_at as at
     from email_deliveries d join email_events ev on ev.idempotency_key = d.idempotency_key
     where d.employee_id = $1 order by ev.occurred_at, ev.received_at limit 500`,
    [employeeId],
  );
  return rows;
}

export const unconfirmedEmailOutput = z.object({
  key: z.string(),
  recipient: z.string(),
  employeeId: z.number().nullable(),
  companyId: z.string().nullable(),
  recordedAt: z.date(),
  /** The evidence gathered: Activity lookups made, the last one and its error, what is known. */
  lookups: z.number(),
  lastLookedUpAt: z.date().nullable(),
  lookupError: z.string().nullable(),
  evidence: z.string().nullable(),
  /** Why no proof: 'none' (sent at once, no batch), or the batch's state (uncancellable, sealed). */
  batch: z.string(),
});
export type UnconfirmedEmail = z.infer<typeof unconfirmedEmailOutput>;

/** Unconfirmed emails (no batch left to cancel, no evidence), oldest first; of one company when given. */
export async function unconfirmedEmails(pool: Pool, companyId?: string): Promise<UnconfirmedEmail[]> {
  const { rows } = await pool.query<UnconfirmedEmail>(
    `select u.idempotency_key as key, u.recipient, d.employee_id as "employeeId", d.company_id as "companyId", u.recorded_at as "recordedAt",
            u.lookups, u.last_looked_up_at as "lastLookedUpAt", u.lookup_error as "lookupError", u.evidence, coalesce(b.state, 'none') as batch
     from email_unknown_outcomes u join email_deliveries d on d.idempotency_key = u.idempotency_key left join email_batches b on b.batch_id = u.batch_id
     where u.settled_at is null and b.state is distinct from 'open' and ($1::uuid is null or d.company_id = $1::uuid)
     order by u.recorded_at limit 200`,
    [companyId ?? null],
  );
  return rows;
}

export const emailAccountOutput = z.object({
  paused: z.object({ queue: z.string(), reason: z.string(), errorCode: z.string(), pausedAt: z.date(), pausedBy: z.string() }).nullable(),
  /** Unknown outcomes being looked up: how many, the oldest, the last lookup (the coverage). */
  unknown: z.object({ open: z.number(), oldest: z.date().nullable(), lastLookedUpAt: z.date().nullable(), neverLookedUp: z.number() }),
  unconfirmed: z.array(unconfirmedEmailOutput),
  resentOnProof: z.number(),
  resentByPerson: z.number(),
  /** SendGrid batches of the bulk by state (open, sealed, cancelled, uncancellable). */
  batches: z.record(z.string(), z.number()),
  webhook: z.record(z.string(), z.number()),
  /** The Event Webhook's health as received: last batch, newest event, how late, refusals. */
  webhookHealth: z.object({
    lastReceivedAt: z.date().nullable(),
    lastEventAt: z.date().nullable(),
    lastLagMs: z.number().nullable(),
    maxLagMs: z.number(),
    failures: z.number(),
    lastFailureAt: z.date().nullable(),
    lastFailure: z.string().nullable(),
  }),
});

/** The admin's email panel: the queue's pause, unknown outcomes and their coverage, unconfirmed emails, the webhook's counters and health. */
export async function emailAccountStatus(pool: Pool): Promise<z.infer<typeof emailAccountOutput>> {
  const [pauses, counts, unknown, sums, batches, health, unconfirmed] = await Promise.all([
    queuePauses(pool),
    webhookCounts(pool),
    pool.query<{ open: number; oldest: Date | null; lastLookedUpAt: Date | null; neverLookedUp: number }>(
      `select count(*)::int as open, min(recorded_at) as oldest, max(last_looked_up_at) as "lastLookedUpAt",
              count(*) filter (where last_looked_up_at is null)::int as "neverLookedUp"
       from email_unknown_outcomes where settled_at is null`,
    ),
    pool.query<{ proof: number; person: number }>(
      `select coalesce(sum(resent_on_proof), 0)::int as proof, coalesce(sum(resent_by_person), 0)::int as person from email_deliveries
       where resent_on_proof > 0 or resent_by_person > 0`,
    ),
    pool.query<{ state: string; n: number }>(`select state, count(*)::int as n from email_batches group by state`),
    pool.query<z.infer<typeof emailAccountOutput>['webhookHealth']>(
      `select last_received_at as "lastReceivedAt", last_event_at as "lastEventAt", last_lag_ms as "lastLagMs", max_lag_ms as "maxLagMs",
              failures, last_failure_at as "lastFailureAt", last_failure as "lastFailure" from email_webhook_health where id = 1`,
    ),
    unconfirmedEmails(pool),
  ]);
  return {
    paused: pauses.find((p) => p.queue === 'send-email') ?? null,
    unknown: unknown.rows[0]!,
    unconfirmed,
    resentOnProof: sums.rows[0]!.proof,
    resentByPerson: sums.rows[0]!.person,
    batches: Object.fromEntries(batches.rows.map((r) => [r.state, r.n])),
    webhook: counts,
    webhookHealth: health.rows[0] ?? {
      lastReceivedAt: null,
      lastEventAt: null,
      lastLagMs: null,
      maxLagMs: 0,
      failures: 0,
      lastFailureAt: null,
      lastFailure: null,
    },
  };
}

/** The admin's "resume": the send-email queue runs again (audited). */
export async function resumeEmailQueue(pool: Pool, actor: string): Promise<{ resumed: boolean }> {
  return { resumed: (await resumeQueue(pool, 'send-email', actor)) !== null };
}

/**
 * Each payroll run with unconfirmed slip emails: how many, and the seconds left until its deadline
 * (09:00 on the 1st after the month, the company's zone): the metric
 * beton_email_unconfirmed_deadline_seconds, whose alert fires as the deadline approaches with a
 * person's decision still pending (docs/exactly-once.md).
 */
export async function unconfirmedByRun(
  pool: Pool,
  now = new Date(),
): Promise<Array<{ company: string; run: string; unconfirmed: number; secondsToDeadline: number }>> {
  const { rows } = await pool.query<{ company: string; month: string; time_zone: string; deadline: string; n: number }>(
    `select c.id as company, r.month, c.time_zone, c.deadline, count(*)::int as n
     from email_unknown_outcomes u join email_deliveries d on d.idempotency_key = u.idempotency_key
       join payroll_runs r on r.id = d.payroll_run_id join companies c on c.id = r.company_id
       left join email_batches b on b.batch_id = u.batch_id
     where u.settled_at is null and b.state is distinct from 'open'
     group by 1, 2, 3, 4`,
  );
  return rows.map((r) => ({
    company: r.company,
    run: r.month,
    unconfirmed: r.n,
    secondsToDeadline: (slipDeadline(r.month, r.time_zone, r.deadline).getTime() - now.getTime()) / 1000,
  }));
}

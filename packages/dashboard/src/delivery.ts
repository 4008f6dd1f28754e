/**
 * Delivery truth for HR and admins (issue 16, R12): what SendGrid's Event Webhook said about
 * each slip — delivered, bounced, dropped, or still awaiting confirmation — the addresses HR
 * must fix, each slip's events, and the send-email queue's account-fault pause.
 */
import type { Pool } from '@beton/db';
import { queuePauses, resumeQueue } from '@beton/jobs/client';
import { FINAL_STATES, webhookCounts } from '@beton/payroll/events';
import { z } from 'zod';
import { notFound } from './errors.ts';

export const deliveryCountsOutput = z.object({
  delivered: z.number(),
  bounced: z.number(),
  dropped: z.number(),
  spamReports: z.number(),
  awaiting: z.number(),
});
export type DeliveryCounts = z.infer<typeof deliveryCountsOutput>;

/** A run's slips by delivery truth. `awaiting`: accepted (or its send's outcome unknown) with no final event yet. */
export async function runDeliveryCounts(pool: Pool, companyId: string, runId: string): Promise<DeliveryCounts> {
  const run = await pool.query(`select 1 from payroll_runs where id = $1 and company_id = $2`, [runId, companyId]);
  if (!run.rowCount) throw notFound('payroll run');
  const { rows } = await pool.query<DeliveryCounts>(
    `select count(*) filter (where event_state = 'delivered')::int as delivered, count(*) filter (where event_state = 'bounced')::int as bounced,
            count(*) filter (where event_state = 'dropped')::int as dropped, count(*) filter (where event_state = 'spam_report')::int as "spamReports",
            count(*) filter (where (status = 'sent' or outcome_unknown_since is not null) and (event_state is null or not (event_state = any($2::text[]))))::int as awaiting
     from email_deliveries where payroll_run_id = $1`,
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

export const emailAccountOutput = z.object({
  paused: z.object({ queue: z.string(), reason: z.string(), errorCode: z.string(), pausedAt: z.date(), pausedBy: z.string() }).nullable(),
  resentAfterUnknown: z.number(),
  unknownNow: z.number(),
  webhook: z.record(z.string(), z.number()),
});

/** The admin's email panel: the queue's pause (why, since when), possible duplicates, the webhook's counters. */
export async function emailAccountStatus(pool: Pool): Promise<z.infer<typeof emailAccountOutput>> {
  const [pauses, counts, sums] = await Promise.all([
    queuePauses(pool),
    webhookCounts(pool),
    pool.query<{ resent: number; unknown: number }>(
      `select coalesce(sum(resent_after_unknown), 0)::int as resent, count(*) filter (where outcome_unknown_since is not null)::int as unknown from email_deliveries`,
    ),
  ]);
  return {
    paused: pauses.find((p) => p.queue === 'send-email') ?? null,
    resentAfterUnknown: sums.rows[0]!.resent,
    unknownNow: sums.rows[0]!.unknown,
    webhook: counts,
  };
}

/**
 * The Event Webhook's lag: seconds since the oldest email the provider accepted in the last 24
 * hours that no webhook event has confirmed yet (0 when none). A receiver that is down, or a
 * webhook SendGrid stopped posting, shows as a line that keeps rising. The schedulers report it
 * as beton_email_webhook_lag_seconds.
 */
export async function webhookLagSeconds(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ seconds: number }>(
    `select coalesce(extract(epoch from now() - min(sent_at)), 0)::float8 as seconds from email_deliveries
     where created_at > now() - interval '1 day' and status = 'sent' and event_state is null and sent_at is not null`,
  );
  return Math.max(0, rows[0]!.seconds);
}

/** The admin's "resume": the send-email queue runs again (audited). */
export async function resumeEmailQueue(pool: Pool, actor: string): Promise<{ resumed: boolean }> {
  return { resumed: (await resumeQueue(pool, 'send-email', actor)) !== null };
}

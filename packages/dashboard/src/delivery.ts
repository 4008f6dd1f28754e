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
import {
  addressToFixRows,
  batchesByState,
  employeeEventRows,
  employeeOfCompany,
  oldestUnconfirmedByWebhookSeconds,
  resendSums,
  runDeliveryCountsRow,
  runOfCompany,
  unconfirmedEmailRows,
  unconfirmedRunRows,
  unknownOutcomeCoverage,
  webhookHealthRow,
} from './sql/deliveries.ts';

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
  if (!(await runOfCompany(pool, companyId, runId))) throw notFound('payroll run');
  return runDeliveryCountsRow(pool, runId, FINAL_STATES);
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
  return addressToFixRows(pool, companyId);
}

export const deliveryEventOutput = z.object({ key: z.string(), event: z.string(), email: z.string(), reason: z.string().nullable(), at: z.date() });

/** Every stored Event Webhook event of an employee's emails, oldest first. */
export async function employeeDeliveryEvents(pool: Pool, companyId: string, employeeId: number): Promise<Array<z.infer<typeof deliveryEventOutput>>> {
  if (!(await employeeOfCompany(pool, companyId, employeeId))) throw notFound('employee');
  return employeeEventRows(pool, employeeId);
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
  return unconfirmedEmailRows(pool, companyId);
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
    unknownOutcomeCoverage(pool),
    resendSums(pool),
    batchesByState(pool),
    webhookHealthRow(pool),
    unconfirmedEmails(pool),
  ]);
  return {
    paused: pauses.find((p) => p.queue === 'send-email') ?? null,
    unknown,
    unconfirmed,
    resentOnProof: sums.proof,
    resentByPerson: sums.person,
    batches,
    webhook: counts,
    webhookHealth: health ?? {
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

/**
 * The Event Webhook's lag: seconds since the oldest email the provider accepted in the last 24
 * hours that no webhook event has confirmed yet (0 when none). A receiver that is down, or a
 * webhook SendGrid stopped posting, shows as a line that keeps rising. The schedulers report it
 * as beton_email_webhook_lag_seconds.
 */
export async function webhookLagSeconds(pool: Pool): Promise<number> {
  return Math.max(0, await oldestUnconfirmedByWebhookSeconds(pool));
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
  const rows = await unconfirmedRunRows(pool);
  return rows.map((r) => ({
    company: r.company,
    run: r.month,
    unconfirmed: r.n,
    secondsToDeadline: (slipDeadline(r.month, r.time_zone, r.deadline).getTime() - now.getTime()) / 1000,
  }));
}

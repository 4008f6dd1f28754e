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
import { addressToFixRows, employeeEventRows, employeeOfCompany, runDeliveryCountsRow, runOfCompany, unknownOutcomeSums } from './sql/deliveries.ts';

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

export const emailAccountOutput = z.object({
  paused: z.object({ queue: z.string(), reason: z.string(), errorCode: z.string(), pausedAt: z.date(), pausedBy: z.string() }).nullable(),
  resentAfterUnknown: z.number(),
  unknownNow: z.number(),
  webhook: z.record(z.string(), z.number()),
});

/** The admin's email panel: the queue's pause (why, since when), possible duplicates, the webhook's counters. */
export async function emailAccountStatus(pool: Pool): Promise<z.infer<typeof emailAccountOutput>> {
  const [pauses, counts, sums] = await Promise.all([queuePauses(pool), webhookCounts(pool), unknownOutcomeSums(pool)]);
  return {
    paused: pauses.find((p) => p.queue === 'send-email') ?? null,
    resentAfterUnknown: sums.resent,
    unknownNow: sums.unknown,
    webhook: counts,
  };
}

/** The admin's "resume": the send-email queue runs again (audited). */
export async function resumeEmailQueue(pool: Pool, actor: string): Promise<{ resumed: boolean }> {
  return { resumed: (await resumeQueue(pool, 'send-email', actor)) !== null };
}

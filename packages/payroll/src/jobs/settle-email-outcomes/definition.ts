import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

/** The deployment setting this job reads (EMAIL_SETTLE_CRON). */
export interface SettleScheduleSettings {
  emailSettleCron: string;
}

/**
 * Every minute, one run at a time: records the sends whose answer was lost, settles them by
 * evidence (webhook events, Activity lookups), and decides each closed window's batch before its
 * cancel cutoff — sealed, or cancelled and its emails sent again (packages/payroll/src/settle.ts).
 */
export const settleEmailOutcomesJob = defineJob({
  name: 'settle-email-outcomes',
  queue: 'maintenance',
  schema: z.object({ dueAt: z.string() }),
  timeoutMs: 25_000,
  retry: { maxAttempts: 2 },
  idempotencyKey: (p) => `settle-email-outcomes:${p.dueAt}`,
  schedule: { cron: '* * * * *', timeZone: 'UTC', payload: (dueAt) => ({ dueAt }) },
  /** EMAIL_SETTLE_CRON replaces the cron (UTC; the drill runs it every few seconds). */
  configure: (s: SettleScheduleSettings) => ({ schedule: { cron: s.emailSettleCron } }),
});

import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

/** The deployment setting this job reads (RETENTION_CRON). */
export interface RetentionScheduleSettings {
  retentionCron: string;
}

/**
 * Daily retention pass (RETENTION_CRON, default 23:30 in Dhaka, away from the payroll night):
 * deletes in batches what is past its retention period (packages/payroll/src/retention.ts).
 * A pass that runs out of its time budget continues in a follow-up job (`part` + 1).
 */
export const purgeHistoryJob = defineJob({
  name: 'purge-history',
  queue: 'maintenance',
  schema: z.object({ dueAt: z.string(), part: z.number().int().nonnegative().optional() }),
  timeoutMs: 25_000,
  retry: { maxAttempts: 3 },
  idempotencyKey: (p) => `retention:${p.dueAt}:${p.part ?? 0}`,
  schedule: { cron: '30 17 * * *', timeZone: 'UTC', payload: (dueAt) => ({ dueAt }) },
  /** RETENTION_CRON replaces the cron (UTC). */
  configure: (s: RetentionScheduleSettings) => ({ schedule: { cron: s.retentionCron } }),
});

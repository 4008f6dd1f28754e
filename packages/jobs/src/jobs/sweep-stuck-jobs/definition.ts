import { z } from 'zod';
import { defineJob } from '../../definition.ts';

/** The deployment setting this job reads (SWEEP_CRON). */
export interface SweepSettings {
  sweepCron: string;
}

/** Every 5 minutes: put back jobs running too long or held by a silent worker (R8). */
export const sweepStuckJobsJob = defineJob({
  name: 'sweep-stuck-jobs',
  queue: 'maintenance',
  schema: z.object({ dueAt: z.string() }),
  timeoutMs: 25_000,
  retry: { maxAttempts: 2 },
  idempotencyKey: (p) => `sweep:${p.dueAt}`,
  schedule: { cron: '*/5 * * * *', timeZone: 'UTC', payload: (dueAt) => ({ dueAt }) },
  /** SWEEP_CRON replaces the cron (UTC). */
  configure: (s: SweepSettings) => ({ schedule: { cron: s.sweepCron } }),
});

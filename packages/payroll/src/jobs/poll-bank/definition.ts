import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

/** The deployment setting this job reads (BANK_POLL_CRON). */
export interface BankPollSettings {
  bankPollCron: string;
}

/** Every 15 minutes: ask the bank which salaries were credited (R1 recurring, R11). */
export const pollBankJob = defineJob({
  name: 'poll-bank',
  queue: 'maintenance',
  schema: z.object({ dueAt: z.string() }),
  timeoutMs: 25_000,
  retry: { maxAttempts: 3 },
  // The next poll asks the bank for everything since the last successful one: a bank outage
  // is not a dead letter; an hour without a successful poll is an alert.
  supersededByNextRun: { alertAfterMs: 60 * 60_000 },
  idempotencyKey: (p) => `bank-poll:${p.dueAt}`,
  schedule: { cron: '*/15 * * * *', timeZone: 'UTC', payload: (dueAt) => ({ dueAt }) },
  /** BANK_POLL_CRON replaces the cron (UTC). */
  configure: (s: BankPollSettings) => ({ schedule: { cron: s.bankPollCron } }),
});

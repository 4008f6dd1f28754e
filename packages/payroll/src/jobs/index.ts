/**
 * Payroll's jobs, in the order a month's work flows through them; each is a folder here with its
 * definition (payload schema, key, policy, schedule) and its handler side by side:
 *
 *   payroll-fanout → render-slip → send-slip-email → apply-email-events (delivery events)
 *                  → submit-bank-transfers;  poll-bank → send-bank-status-email
 *   send-reminder-email (30 minutes after HR approves), purge-history (daily retention)
 *   settle-email-outcomes (every minute: unknown outcomes settled by evidence or by proof)
 *
 * Side-effect-free (definitions only): the web app enqueues with these. The handlers, for worker
 * processes: each job folder's handler.ts, wired by the worker (apps/worker/src/handlers.ts).
 */
import type { JobEnqueuer } from '@beton/jobs/client';
import { applyEmailEventsJob } from './apply-email-events/definition.ts';
import type { EmailJobSettings } from './email-policy.ts';
import { payrollFanoutJob } from './payroll-fanout/definition.ts';
import { pollBankJob, type BankPollSettings } from './poll-bank/definition.ts';
import { purgeHistoryJob, type RetentionScheduleSettings } from './purge-history/definition.ts';
import { renderSlipJob } from './render-slip/definition.ts';
import { sendBankStatusEmailJob } from './send-bank-status-email/definition.ts';
import { sendReminderEmailJob } from './send-reminder-email/definition.ts';
import { sendSlipEmailJob } from './send-slip-email/definition.ts';
import { settleEmailOutcomesJob, type SettleScheduleSettings } from './settle-email-outcomes/definition.ts';
import { submitBankTransfersJob } from './submit-bank-transfers/definition.ts';

export {
  applyEmailEventsJob,
  payrollFanoutJob,
  pollBankJob,
  purgeHistoryJob,
  renderSlipJob,
  sendBankStatusEmailJob,
  sendReminderEmailJob,
  sendSlipEmailJob,
  settleEmailOutcomesJob,
  submitBankTransfersJob,
};
export * from './email-policy.ts';
export * from './slip-payload.ts';

export const payrollJobs = [
  payrollFanoutJob,
  renderSlipJob,
  sendSlipEmailJob,
  sendReminderEmailJob,
  applyEmailEventsJob,
  submitBankTransfersJob,
  pollBankJob,
  sendBankStatusEmailJob,
  purgeHistoryJob,
  settleEmailOutcomesJob,
] as const;
export type PayrollJobs = typeof payrollJobs;

/** What payroll's services enqueue with: any job client whose registry holds payroll's jobs. */
export type PayrollJobClient = JobEnqueuer<PayrollJobs>;

/** The deployment settings payroll's jobs read in `configure` (the worker's config supplies them). */
export type PayrollJobSettings = EmailJobSettings & BankPollSettings & RetentionScheduleSettings & SettleScheduleSettings;

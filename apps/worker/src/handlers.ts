/**
 * Every job's handler, wired with what it uses: the worker owns this map. Each domain package
 * writes its jobs' handlers next to their definitions (`src/jobs/<job>/handler.ts`) and says what
 * they need; the job list itself is written once, in each domain's `src/jobs/index.ts`, and the
 * registry (@beton/dashboard/job-registry) joins those lists. `satisfies JobHandlers<BetonJobs>`
 * makes a job of the registry without a handler here — or a handler of no job — a compile error.
 */
import type { BetonJobs } from '@beton/dashboard/job-registry';
import { buildMonthExportHandler } from '@beton/dashboard/jobs/build-month-export/handler';
import { engineHandlers, type JobClient, type JobHandlers } from '@beton/jobs';
import { createBatchSource } from '@beton/payroll';
import { applyEmailEventsHandler } from '@beton/payroll/jobs/apply-email-events/handler';
import type { PayrollHandlerDeps } from '@beton/payroll/jobs/handler-deps';
import { payrollFanoutHandler } from '@beton/payroll/jobs/payroll-fanout/handler';
import { pollBankHandler } from '@beton/payroll/jobs/poll-bank/handler';
import { purgeHistoryHandler } from '@beton/payroll/jobs/purge-history/handler';
import { renderSlipHandler } from '@beton/payroll/jobs/render-slip/handler';
import { sendBankStatusEmailHandler } from '@beton/payroll/jobs/send-bank-status-email/handler';
import { sendReminderEmailHandler } from '@beton/payroll/jobs/send-reminder-email/handler';
import { sendSlipEmailHandler } from '@beton/payroll/jobs/send-slip-email/handler';
import { settleEmailOutcomesHandler } from '@beton/payroll/jobs/settle-email-outcomes/handler';
import { submitBankTransfersHandler } from '@beton/payroll/jobs/submit-bank-transfers/handler';
import { importEmployeesHandler } from '@beton/people/jobs/import-employees/handler';
import type { WorkerConfig } from './config.ts';

/** What this process has for the handlers: its services and its settings. */
export interface WorkerHandlerDeps extends Omit<PayrollHandlerDeps, 'jobs' | 'email' | 'retention'> {
  jobs: JobClient<BetonJobs>;
  config: WorkerConfig;
}

export function createHandlers(deps: WorkerHandlerDeps): JobHandlers<BetonJobs> {
  const { config, ...services } = deps;
  const payroll: PayrollHandlerDeps = {
    ...services,
    email: { scheduling: config.email.scheduling, batches: createBatchSource(deps, config.email.scheduling) },
    retention: config.retention,
  };
  return {
    // Payroll, in the order a month's work flows through it.
    'payroll-fanout': payrollFanoutHandler(payroll),
    'render-slip': renderSlipHandler(payroll),
    'send-slip-email': sendSlipEmailHandler(payroll),
    'send-reminder-email': sendReminderEmailHandler(payroll),
    'apply-email-events': applyEmailEventsHandler(payroll),
    'submit-bank-transfers': submitBankTransfersHandler(payroll),
    'poll-bank': pollBankHandler(payroll),
    'send-bank-status-email': sendBankStatusEmailHandler(payroll),
    'purge-history': purgeHistoryHandler(payroll),
    'settle-email-outcomes': settleEmailOutcomesHandler(payroll),
    // People and the dashboard's exports.
    'import-employees': importEmployeesHandler({ pool: deps.pool, jobs: deps.jobs, limits: config.importLimits }),
    'build-month-export': buildMonthExportHandler({ pool: deps.pool, exportTtlHours: config.exportTtlHours }),
    // The engine's own (the sweeper, the no-op).
    ...engineHandlers({ pool: deps.pool, stuckRunningMs: config.stuckRunningMs, staleHeartbeatMs: config.staleHeartbeatMs }),
  } satisfies JobHandlers<BetonJobs>;
}

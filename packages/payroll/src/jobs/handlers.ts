/** Payroll's handlers, for a worker process: one per job of `payrollJobs` (checked by the compiler). */
import type { JobHandlers } from '@beton/jobs/client';
import { applyEmailEventsHandler } from './apply-email-events/handler.ts';
import type { PayrollHandlerDeps } from './handler-deps.ts';
import type { PayrollJobs } from './index.ts';
import { payrollFanoutHandler } from './payroll-fanout/handler.ts';
import { pollBankHandler } from './poll-bank/handler.ts';
import { purgeHistoryHandler } from './purge-history/handler.ts';
import { renderSlipHandler } from './render-slip/handler.ts';
import { sendBankStatusEmailHandler } from './send-bank-status-email/handler.ts';
import { sendReminderEmailHandler } from './send-reminder-email/handler.ts';
import { sendSlipEmailHandler } from './send-slip-email/handler.ts';
import { settleEmailOutcomesHandler } from './settle-email-outcomes/handler.ts';
import { submitBankTransfersHandler } from './submit-bank-transfers/handler.ts';

export type { PayrollHandlerDeps };

export function payrollHandlers(deps: PayrollHandlerDeps): JobHandlers<PayrollJobs> {
  return {
    'payroll-fanout': payrollFanoutHandler(deps),
    'render-slip': renderSlipHandler(deps),
    'send-slip-email': sendSlipEmailHandler(deps),
    'send-reminder-email': sendReminderEmailHandler(deps),
    'apply-email-events': applyEmailEventsHandler(deps),
    'submit-bank-transfers': submitBankTransfersHandler(deps),
    'poll-bank': pollBankHandler(deps),
    'send-bank-status-email': sendBankStatusEmailHandler(deps),
    'purge-history': purgeHistoryHandler(deps),
    'settle-email-outcomes': settleEmailOutcomesHandler(deps),
  };
}

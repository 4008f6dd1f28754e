import type { BetonJobName, JobHandler } from '@beton/jobs';
import { importEmployeesHandler } from '@beton/people/import/handler';
import type { HandlerDeps, HandlerFactory } from './deps.ts';
import { applyEmailEventsHandler } from './apply-email-events.ts';
import { buildMonthExportHandler } from './build-month-export.ts';
import { noopHandler } from './noop.ts';
import { payrollFanoutHandler } from './payroll-fanout.ts';
import { pollBankHandler } from './poll-bank.ts';
import { purgeHistoryHandler } from './purge-history.ts';
import { renderSlipHandler } from './render-slip.ts';
import { sendBankStatusEmailHandler } from './send-bank-status-email.ts';
import { sendReminderEmailHandler } from './send-reminder-email.ts';
import { sendSlipEmailHandler } from './send-slip-email.ts';
import { submitBankTransfersHandler } from './submit-bank-transfers.ts';
import { sweepStuckJobsHandler } from './sweep-stuck-jobs.ts';

/** One handler per job definition; the type makes a definition without a handler a compile error. */
const factories: { [Name in BetonJobName]: HandlerFactory<Name> } = {
  'render-slip': renderSlipHandler,
  'send-slip-email': sendSlipEmailHandler,
  'send-reminder-email': sendReminderEmailHandler,
  'send-bank-status-email': sendBankStatusEmailHandler,
  'payroll-fanout': payrollFanoutHandler,
  'submit-bank-transfers': submitBankTransfersHandler,
  'sweep-stuck-jobs': sweepStuckJobsHandler,
  'poll-bank': pollBankHandler,
  'apply-email-events': applyEmailEventsHandler,
  'purge-history': purgeHistoryHandler,
  // Defined, with its policy, in packages/people/src/import: only its registration is here.
  'import-employees': (deps) => importEmployeesHandler({ pool: deps.pool, enqueue: (payload) => deps.jobs.enqueue('import-employees', payload) }),
  'build-month-export': buildMonthExportHandler,
  noop: noopHandler,
};

export function createHandlers(deps: HandlerDeps): Record<string, JobHandler<never>> {
  return Object.fromEntries(Object.entries(factories).map(([name, make]) => [name, (make as (d: HandlerDeps) => JobHandler<never>)(deps)]));
}

export type { HandlerDeps };

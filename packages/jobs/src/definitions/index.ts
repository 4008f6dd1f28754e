import { importEmployeesJob } from '@beton/people/import/definition';
import { defineJob } from '../definition.ts';
import { applyEmailEvents } from './apply-email-events.ts';
import { buildMonthExport } from './build-month-export.ts';
import { noop } from './noop.ts';
import { payrollFanout } from './payroll-fanout.ts';
import { pollBank } from './poll-bank.ts';
import { purgeHistory } from './purge-history.ts';
import { renderSlip } from './render-slip.ts';
import { sendBankStatusEmail } from './send-bank-status-email.ts';
import { sendReminderEmail } from './send-reminder-email.ts';
import { sendSlipEmail } from './send-slip-email.ts';
import { submitBankTransfers } from './submit-bank-transfers.ts';
import { sweepStuckJobs } from './sweep-stuck-jobs.ts';

export { applyEmailEvents, buildMonthExport, noop, payrollFanout, pollBank, purgeHistory, renderSlip, sendBankStatusEmail, sendReminderEmail, sendSlipEmail, submitBankTransfers, sweepStuckJobs };
export * from './shared.ts';

/** HR's employee import (issue 22): defined with its handler and policy in packages/people/src/import. */
export const importEmployees = defineJob(importEmployeesJob);

/** Every job Beton knows: the typed enqueue and each worker's task list come from here. */
export const jobDefinitions = [
  renderSlip,
  sendSlipEmail,
  sendReminderEmail,
  sendBankStatusEmail,
  payrollFanout,
  submitBankTransfers,
  sweepStuckJobs,
  pollBank,
  applyEmailEvents,
  purgeHistory,
  importEmployees,
  buildMonthExport,
  noop,
] as const;

export type BetonJobs = typeof jobDefinitions;
export type BetonJobName = BetonJobs[number]['name'];

/**
 * The web app's door to @beton/payroll's HR actions (the same services workers and the CLI
 * use). Only `./actions` is imported: the package index would pull the mailer and the PDF
 * renderer into the web server, which never renders or sends anything itself.
 * The payroll services' errors become the dashboard's code-based AppError here.
 */
import { AppError } from '@beton/dashboard';
import type { Pool } from '@beton/db';
import type { BetonJobs } from '@beton/dashboard/job-registry';
import type { JobClient } from '@beton/jobs/client';
import {
  approvePayroll as approve,
  NoPayrollRunError,
  NotFoundError,
  resendCorrectedSlip as corrected,
  resendSlip as resend,
  resendUnconfirmed as unconfirmedAgain,
  sendSlipCopy as copy,
  SlipActionRefused,
  type ApprovalResult,
  type CorrectedSlipResult,
  type ResendResult,
} from '@beton/payroll/actions';

type Jobs = JobClient<BetonJobs>;

async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof NotFoundError) throw new AppError('NOT_FOUND', error.message);
    if (error instanceof NoPayrollRunError) throw new AppError('INVALID_INPUT', error.message, { month: `no payroll run for ${error.month}` });
    if (error instanceof SlipActionRefused) throw new AppError('CONFLICT', error.message);
    throw error;
  }
}

/**
 * HR's "Resend slip" (R13): the month's one slip, never a second email — a new attempt, the one
 * already on its way (moved ahead of the bulk), or "already delivered". `companyId` scopes it
 * (another company's employee → NOT_FOUND).
 */
export function resendSlip(opts: { pool: Pool; jobs: Jobs; companyId: string; employeeId: number; month: string; requestedBy: string }): Promise<ResendResult> {
  const { pool, jobs, ...input } = opts;
  return mapped(() => resend({ pool, jobs }, input));
}

/** HR's confirmed "Send another copy" of a delivered slip: a second email on purpose (CONFLICT while not delivered). */
export function sendSlipCopy(opts: {
  pool: Pool;
  jobs: Jobs;
  companyId: string;
  employeeId: number;
  month: string;
  requestedBy: string;
}): Promise<{ jobId: number; copy: number; created: boolean; to: string }> {
  const { pool, jobs, ...input } = opts;
  return mapped(() => copy({ pool, jobs }, input));
}

/** Approve a month: reminder emails 30 minutes after the first approval (a delayed job per employee); approving again answers what the first did. */
export function approvePayroll(opts: { pool: Pool; jobs: Jobs; companyId: string; month: string; approvedBy: string }): Promise<ApprovalResult> {
  const { pool, jobs, ...input } = opts;
  return mapped(() => approve({ pool, jobs }, input));
}

/** After HR corrected a paid month's salary: the corrected slip (a new attempt, or a copy if the old one arrived). */
export function resendCorrectedSlip(opts: {
  pool: Pool;
  jobs: Jobs;
  companyId: string;
  employeeId: number;
  month: string;
  requestedBy: string;
}): Promise<CorrectedSlipResult> {
  const { pool, jobs, ...input } = opts;
  return mapped(() => corrected({ pool, jobs }, input));
}

/**
 * "Send again" on an unconfirmed slip email: an HR manager's (their company's) or an admin's
 * explicit, audited decision; the page says first that it may arrive twice. CONFLICT when the
 * email is not unconfirmed (settled meanwhile, or its batch may still be cancelled).
 */
export function sendUnconfirmedAgain(opts: { pool: Pool; jobs: Jobs; key: string; actor: string; companyId?: string }): Promise<{ jobKey: string }> {
  const { pool, jobs, ...input } = opts;
  return mapped(() => unconfirmedAgain({ pool, jobs }, input));
}

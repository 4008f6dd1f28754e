import { monthSchema } from '@beton/db/month';
import { z } from 'zod';

/** One employee's slip of one month: the payload of render-slip and of send-slip-email. */
export const slipPayload = z.object({
  companyId: z.string().uuid(),
  employeeId: z.number().int().positive(),
  month: monthSchema,
  payrollRunId: z.string().uuid().optional(),
  /** n-th explicit resend by HR; absent for the monthly run. */
  resend: z.number().int().positive().optional(),
  /** With `resend`: HR's "send another copy", a deliberate extra email, not an attempt at the month's slip. */
  copy: z.literal(true).optional(),
  /**
   * Sent at once, not as a scheduled send of the bulk's batch: an HR manager's or admin's "send
   * again" of an unconfirmed slip (settle.ts). Absent: the monthly run's slip is scheduled.
   */
  immediate: z.literal(true).optional(),
});

/**
 * Key of one slip: `slip:2026-11:emp-48213`, `slip:2026-11:emp-48213:resend-1` for an explicit
 * resend, `slip:2026-11:emp-48213:copy-2` for an extra copy (numbered with the resends). The
 * render job's key; the email job's is this + `:email`, and the delivery records carry it.
 */
export function slipKey(p: { month: string; employeeId: number; resend?: number | undefined; copy?: true | undefined }): string {
  return `slip:${p.month}:emp-${p.employeeId}${p.resend ? `:${p.copy ? 'copy' : 'resend'}-${p.resend}` : ''}`;
}

/**
 * slipKey in SQL (`month` and `employee` SQL expressions), for statements that build keys in
 * the database (the fan-out, an employee's attempts); `resend` an expression of the resend's
 * number, absent for the monthly slip.
 */
export function slipKeySql(month: string, employee: string, resend?: string): string {
  return `'slip:' || ${month} || ':emp-' || ${employee}${resend ? ` || ':resend-' || ${resend}` : ''}`;
}

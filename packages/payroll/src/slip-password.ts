/**
 * Password-protected slips (issue 22): when a company turns `protect_slips` on, each slip PDF is
 * encrypted (AES-256, packages/pdf/src/encrypt.ts) with a password only its employee knows.
 *
 * The rule — ONE place, quoted by the email and docs/pdf.md: the employee's date of birth as
 * DDMMYYYY (born 5 March 1990 → 05031990). An employee without a date of birth cannot get a
 * protected slip: the render fails with `slip_password_missing` (permanent: HR adds the date,
 * then resends), never an unprotected send.
 */
import { PermanentError } from '@beton/jobs/client';

/** The rule in words, for emails and pages. */
export const SLIP_PASSWORD_RULE = {
  en: 'your date of birth as DDMMYYYY (born 5 March 1990: 05031990)',
  bn: 'আপনার জন্মতারিখ, দিন-মাস-বছর (DDMMYYYY) আকারে (৫ মার্চ ১৯৯০ হলে: 05031990)',
} as const;

/** SQL giving an employee row `e`'s password by the rule (null without a date of birth). */
export const SLIP_PASSWORD_SQL = `to_char(e.date_of_birth, 'DDMMYYYY')`;

export const SLIP_PASSWORD_MISSING = 'slip_password_missing';

/** The password of a protected slip, or a permanent, classified failure HR can fix. */
export function requireSlipPassword(employee: { code: string; password: string | null }): string {
  if (!employee.password) {
    throw new PermanentError(
      SLIP_PASSWORD_MISSING,
      `Employee ${employee.code} has no date of birth: the company sends password-protected slips, whose password is the date of birth. Add it to the employee, then resend the slip.`,
    );
  }
  return employee.password;
}

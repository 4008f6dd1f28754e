/**
 * Password-protected slips: when a company turns `protect_slips` on, each slip PDF is encrypted
 * (AES-256, packages/pdf/src/encrypt.ts) with a password only its employee knows.
 *
 * The rule — ONE place, quoted by the email, the pages and docs/pdf.md — is the company's choice
 * (`companies.slip_password`):
 *
 * - 'code' (the default): the employee's slip code, made at random by Beton (SLIP_CODE_ALPHABET,
 *   12 characters: about 56 bits) and shown to HR once, who hands it to the employee. Nothing
 *   about the person derives it: a stolen slip cannot be opened by trying birthdays.
 * - 'date-of-birth': the date of birth as DDMMYYYY (born 5 March 1990 → 05031990). Weaker — about
 *   36,500 values in a century, some 11,000 for working ages, known to HR, family and colleagues:
 *   a stolen slip opens in minutes offline whatever the cipher. Kept as an explicit company choice;
 *   the settings page says so.
 *
 * An employee without the password the rule needs cannot get a protected slip: the render fails
 * with `slip_password_missing` (permanent: HR makes the code or adds the date, then resends),
 * never an unprotected send.
 */
import { PermanentError } from '@beton/jobs/client';
import { randomInt } from 'node:crypto';

export const SLIP_PASSWORD_SOURCES = ['code', 'date-of-birth'] as const;
export type SlipPasswordSource = (typeof SLIP_PASSWORD_SOURCES)[number];

/** The rule in words, per source, for emails and pages. */
export const SLIP_PASSWORD_RULES: Record<SlipPasswordSource, { en: string; bn: string }> = {
  code: {
    en: 'the slip code your HR gave you (like K7PM-X3VQ-C9HW)',
    bn: 'আপনার এইচআর-এর দেওয়া স্লিপ কোড (যেমন K7PM-X3VQ-C9HW)',
  },
  'date-of-birth': {
    en: 'your date of birth as DDMMYYYY (born 5 March 1990: 05031990)',
    bn: 'আপনার জন্মতারিখ, দিন-মাস-বছর (DDMMYYYY) আকারে (৫ মার্চ ১৯৯০ হলে: 05031990)',
  },
};

/** SQL giving an employee row `e`'s password under its company `c`'s rule (null when the employee has none). */
export const SLIP_PASSWORD_SQL = `case when c.slip_password = 'date-of-birth' then to_char(e.date_of_birth, 'DDMMYYYY') else e.slip_code end`;

/** Letters and digits that cannot be mistaken for each other when read aloud or typed from paper (no 0/O, 1/I/L, 5/S, 8/B, 2/Z). */
export const SLIP_CODE_ALPHABET = 'ACDEFGHJKMNPQRTUVWXY34679';
/** A new slip code from the operating system's random source: three groups of four (`K7PM-X3VQ-C9HW`), about 56 bits. */
export function newSlipCode(): string {
  const chars = Array.from({ length: 12 }, () => SLIP_CODE_ALPHABET[randomInt(SLIP_CODE_ALPHABET.length)]);
  return [chars.slice(0, 4), chars.slice(4, 8), chars.slice(8)].map((g) => g.join('')).join('-');
}

export const SLIP_PASSWORD_MISSING = 'slip_password_missing';

/** The password of a protected slip, or a permanent, classified failure HR can fix. */
export function requireSlipPassword(employee: { code: string; password: string | null; source: SlipPasswordSource }): string {
  if (!employee.password) {
    throw new PermanentError(
      SLIP_PASSWORD_MISSING,
      employee.source === 'code'
        ? `Employee ${employee.code} has no slip code: the company sends password-protected slips, whose password is the employee's slip code. Make one on the employee's page, hand it over, then resend the slip.`
        : `Employee ${employee.code} has no date of birth: the company sends password-protected slips, whose password is the date of birth. Add it to the employee, then resend the slip.`,
    );
  }
  return employee.password;
}

/** 'YYYY-MM' helpers. A run on the 1st pays the month before (Dec 1 → '2026-11'). */
import { COMPANY_DEFAULTS } from '@beton/db/company-defaults';
import { MONTH_PATTERN as MONTH } from '@beton/db/month';
import { DateTime } from 'luxon';

export class InvalidMonthError extends Error {
  override readonly name = 'InvalidMonthError';
  constructor(value: string) {
    super(`Invalid month "${value}": expected YYYY-MM, e.g. 2026-11`);
  }
}

export function assertMonth(value: string): string {
  if (!MONTH.test(value)) throw new InvalidMonthError(value);
  return value;
}

/** The calendar date of `instant` in `timeZone`: { year, month (1-12), day }. */
export function localDate(instant: Date, timeZone: string): { year: number; month: number; day: number } {
  const local = DateTime.fromJSDate(instant, { zone: timeZone });
  if (!local.isValid) throw new RangeError(`No local date in ${timeZone}: ${local.invalidExplanation ?? local.invalidReason}`);
  return { year: local.year, month: local.month, day: local.day };
}

/** The month a run due at `dueAt` (company time zone) pays: the previous calendar month. */
export function payrollMonthFor(dueAt: Date, timeZone: string): string {
  const { year, month } = localDate(dueAt, timeZone);
  const y = month === 1 ? year - 1 : year;
  const m = month === 1 ? 12 : month - 1;
  return `${y}-${String(m).padStart(2, '0')}`;
}

/**
 * When a month's slips must be in every inbox: `deadline` ('09:00', the company's setting) on
 * the 1st of the next month, in the company's time zone — the day its run is scheduled
 * ('2026-11' → 1 December 2026, 09:00 Asia/Dhaka = 03:00 UTC), whenever the run itself started.
 */
export function slipDeadline(month: string, timeZone: string, deadline: string = COMPANY_DEFAULTS.deadline): Date {
  assertMonth(month);
  const [hour, minute] = deadline.split(':').map(Number) as [number, number];
  const at = DateTime.fromISO(`${month}-01`, { zone: timeZone }).plus({ months: 1 }).set({ hour, minute, second: 0, millisecond: 0 });
  if (!at.isValid) throw new Error(`No deadline for ${month} at ${deadline} in ${timeZone}: ${at.invalidExplanation ?? at.invalidReason}`);
  return at.toJSDate();
}

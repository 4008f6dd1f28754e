import { z } from 'zod';

/**
 * Calendar months and days as Beton's inputs carry them: a payroll month 'YYYY-MM' (the month a
 * payroll pays) and a day 'YYYY-MM-DD' (a filter's day, a date of birth). The one pattern and the
 * one schema per kind that job payloads, tRPC inputs, forms, the dashboard and the payroll
 * services validate with — a value that passes is a real date of the Gregorian calendar in
 * CALENDAR_YEARS, so nothing behind the schema meets an impossible day (2026-02-31) or a year a
 * time library cannot place. Side-effect free: pages may import it (`@beton/db/month`).
 */
export const MONTH_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/;
export const DAY_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** The years a month or a day may fall in (dates of birth from 1900; payroll months up to 2999). */
export const CALENDAR_YEARS = { min: 1900, max: 2999 } as const;

/** True for 'YYYY-MM' of a month in CALENDAR_YEARS. */
export function isCalendarMonth(value: string): boolean {
  const m = MONTH_PATTERN.exec(value);
  return !!m && Number(m[1]) >= CALENDAR_YEARS.min && Number(m[1]) <= CALENDAR_YEARS.max;
}

/** True for 'YYYY-MM-DD' of a day that exists (no 2026-02-29, no 2026-04-31) in CALENDAR_YEARS. */
export function isCalendarDay(value: string): boolean {
  const m = DAY_PATTERN.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < CALENDAR_YEARS.min || year > CALENDAR_YEARS.max) return false;
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

export const MONTH_MESSAGE = 'month must look like 2026-11 (a month of the years 1900–2999)';
export const DAY_MESSAGE = 'a day looks like 2026-11-30 and exists in the calendar (1900–2999)';

export const monthSchema = z.string().refine(isCalendarMonth, MONTH_MESSAGE);
export const daySchema = z.string().refine(isCalendarDay, DAY_MESSAGE);

/**
 * The month ('YYYY-MM') that `instant` falls in on the calendar of `timeZone`: at
 * 2026-11-30T20:00Z it is already December in Dhaka (UTC+6), still November in UTC.
 */
export function monthAt(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit' }).formatToParts(instant);
  const part = (type: 'year' | 'month') => parts.find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}`;
}

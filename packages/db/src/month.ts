import { z } from 'zod';

/**
 * A payroll month, 'YYYY-MM' (the month a payroll pays): the one pattern and the one schema that
 * job payloads, tRPC inputs, the dashboard and the payroll services validate it with.
 * Side-effect free: pages may import it (`@beton/db/month`).
 */
export const MONTH_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/;

export const monthSchema = z.string().regex(MONTH_PATTERN, 'month must look like 2026-11');

/**
 * The month ('YYYY-MM') that `instant` falls in on the calendar of `timeZone`: at
 * 2026-11-30T20:00Z it is already December in Dhaka (UTC+6), still November in UTC.
 */
export function monthAt(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit' }).formatToParts(instant);
  const part = (type: 'year' | 'month') => parts.find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}`;
}

import { DateTime } from 'luxon';

/**
 * The UTC instant of a local wall-clock time in `timeZone` (luxon: the zone's offset at that
 * very time, so a zone with daylight saving is right on both sides of a change; a time that a
 * spring-forward skips moves forward by the gap).
 */
export function zonedTime(timeZone: string, year: number, month: number, day: number, hour: number, minute: number): Date {
  return valid(DateTime.fromObject({ year, month, day, hour, minute }, { zone: timeZone }), `${year}-${month}-${day} ${hour}:${minute}`, timeZone).toJSDate();
}

function valid(at: DateTime, what: string, timeZone: string): DateTime {
  if (!at.isValid) throw new RangeError(`No instant for ${what} in ${timeZone}: ${at.invalidExplanation ?? at.invalidReason}`);
  return at;
}

/**
 * `date` in `timeZone`, formatted through luxon, which makes each Intl.DateTimeFormat once and
 * keeps it: making one costs ~0.15 ms (ICU loads the locale's patterns), and HR's runs page
 * shows several times per run — made anew on every call, at 13 runs of history, they were most
 * of the call (bench:history: 22.9–34.3 ms a call whose statements took ~12 ms).
 */
const inZone = (date: Date, timeZone: string) => valid(DateTime.fromJSDate(date, { zone: timeZone }), date.toISOString(), timeZone);

/** "09:00" style local time of `date` in `timeZone`. */
export function localHhMm(date: Date, timeZone: string): string {
  return inZone(date, timeZone).toLocaleString({ hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }, { locale: 'en-GB' });
}

/** "1 Dec 2026" (English) and "1 ডিসেম্বর 2026" (Bengali, Latin digits as everywhere) of `date` in `timeZone`. */
export function localDay(date: Date, timeZone: string): { en: string; bn: string } {
  const at = inZone(date, timeZone);
  const day = { day: 'numeric', month: 'short', year: 'numeric' } as const;
  return { en: at.toLocaleString(day, { locale: 'en-GB' }), bn: at.toLocaleString({ ...day, month: 'long' }, { locale: 'bn-BD-u-nu-latn' }) };
}

/** "09:00 on 1 Dec 2026" / "1 ডিসেম্বর 2026, 09:00": a time that may be another day than today. */
export function localWhen(date: Date, timeZone: string): { en: string; bn: string } {
  const day = localDay(date, timeZone);
  const hhmm = localHhMm(date, timeZone);
  return { en: `${hhmm} on ${day.en}`, bn: `${day.bn}, ${hhmm}` };
}

/** The admin console shows and reads times in this zone (the companies are in Bangladesh). */
export const CONSOLE_TIME_ZONE = 'Asia/Dhaka';

/** The first instant of a 'YYYY-MM-DD' day in `timeZone`; `plusDays` moves to a later day. */
export function dayStart(day: string, timeZone: string, plusDays = 0): Date {
  // Calendar days, not 24-hour steps: the day after a spring-forward starts 23 hours later.
  return valid(DateTime.fromISO(day, { zone: timeZone }), day, timeZone)
    .plus({ days: plusDays })
    .startOf('day')
    .toJSDate();
}

function durationParts(ms: number, units: { d: string; h: string; min: string; s: string }): string {
  const s = Math.round(Math.abs(ms) / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h >= 48) return `${Math.floor(h / 24)} ${units.d} ${h % 24} ${units.h}`;
  if (h > 0) return `${h} ${units.h} ${m} ${units.min}`;
  if (m > 0) return `${m} ${units.min}`;
  return `${s} ${units.s}`;
}

export function formatDuration(ms: number): string {
  return durationParts(ms, { d: 'days', h: 'h', min: 'min', s: 's' });
}

/** formatDuration in Bengali words (digits stay Latin, as everywhere in the dashboard). */
export function formatDurationBn(ms: number): string {
  return durationParts(ms, { d: 'দিন', h: 'ঘণ্টা', min: 'মিনিট', s: 'সেকেন্ড' });
}

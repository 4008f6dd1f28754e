/** Wall-clock parts of `date` in `timeZone`. */
function parts(date: Date, timeZone: string): Record<string, number> {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  });
  const out: Record<string, number> = {};
  for (const p of fmt.formatToParts(date)) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** The UTC instant of a local wall-clock time in `timeZone` (fixed-offset zones like Asia/Dhaka are exact; DST zones resolve to the first match). */
export function zonedTime(timeZone: string, year: number, month: number, day: number, hour: number, minute: number): Date {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const p = parts(new Date(guess), timeZone);
  const asUtc = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return new Date(guess - (asUtc - guess));
}

/** "09:00" style local time of `date` in `timeZone`. */
export function localHhMm(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(date);
}

/** "1 Dec 2026" (English) and "1 ডিসেম্বর 2026" (Bengali, Latin digits as everywhere) of `date` in `timeZone`. */
export function localDay(date: Date, timeZone: string): { en: string; bn: string } {
  const opts = { timeZone, day: 'numeric', month: 'short', year: 'numeric' } as const;
  return {
    en: new Intl.DateTimeFormat('en-GB', opts).format(date),
    bn: new Intl.DateTimeFormat('bn-BD-u-nu-latn', { ...opts, month: 'long' }).format(date),
  };
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
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return zonedTime(timeZone, y, m, d + plusDays, 0, 0);
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

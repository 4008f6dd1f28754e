/**
 * A schedule's cron expression in words. English from cronstrue; cronstrue has no Bengali
 * locale (3.39: no `bn`), so Bengali comes from `describeCronBn` below, which covers the forms
 * our schedules use (every n minutes, hourly, daily, weekly, monthly at a time) and says
 * "ক্রন এক্সপ্রেশন: …" for anything else rather than guessing.
 */
import cronstrue from 'cronstrue';
import { bengaliDigits } from './format.ts';

export function describeCronEn(cron: string): string {
  try {
    return cronstrue.toString(cron, { use24HourTimeFormat: true, throwExceptionOnParseError: true });
  } catch {
    return `Cron expression: ${cron}`;
  }
}

const WEEKDAYS_BN = ['রবিবার', 'সোমবার', 'মঙ্গলবার', 'বুধবার', 'বৃহস্পতিবার', 'শুক্রবার', 'শনিবার'];
const NUMBER = /^\d+$/;

function hhmm(hour: string, minute: string): string {
  return bengaliDigits(`${hour.padStart(2, '0')}:${minute.padStart(2, '0')}`);
}

export function describeCronBn(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  const fallback = `ক্রন এক্সপ্রেশন: ${cron}`;
  if (fields.length !== 5) return fallback;
  const [minute, hour, day, month, weekday] = fields as [string, string, string, string, string];
  if (month !== '*') return fallback;
  const step = (f: string) => /^\*\/(\d+)$/.exec(f)?.[1];
  // */n * * * *
  if (step(minute) && hour === '*' && day === '*' && weekday === '*') return `প্রতি ${bengaliDigits(step(minute)!)} মিনিটে`;
  if (minute === '*' && hour === '*' && day === '*' && weekday === '*') return 'প্রতি মিনিটে';
  if (!NUMBER.test(minute)) return fallback;
  // m * * * *  /  m */n * * *
  if (hour === '*' && day === '*' && weekday === '*') return `প্রতি ঘণ্টার ${bengaliDigits(minute)} মিনিটে`;
  if (step(hour) && day === '*' && weekday === '*') return `প্রতি ${bengaliDigits(step(hour)!)} ঘণ্টা পর পর, ঘণ্টার ${bengaliDigits(minute)} মিনিটে`;
  if (!NUMBER.test(hour)) return fallback;
  const at = hhmm(hour, minute);
  if (day === '*' && weekday === '*') return `প্রতিদিন ${at}-এ`;
  if (NUMBER.test(day) && weekday === '*') return `প্রতি মাসের ${bengaliDigits(day)} তারিখে ${at}-এ`;
  if (day === '*' && /^[0-7](,[0-7])*$/.test(weekday))
    return `প্রতি ${weekday
      .split(',')
      .map((d) => WEEKDAYS_BN[Number(d) % 7])
      .join(', ')} ${at}-এ`;
  return fallback;
}

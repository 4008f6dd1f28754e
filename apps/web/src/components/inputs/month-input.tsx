'use client';
/**
 * A month field of ours, in the page's language: the month's name and the year as two lists
 * ("নভেম্বর" "২০২৬"), never the browser's own picker (which speaks the browser's language and
 * writes "mm/yyyy"). The value is "2026-11", or "" while a month is not chosen.
 */
import { useFormatter, useTranslations } from 'next-intl';
import { useEffect, useState, type ReactNode } from 'react';

const MONTHS = Array.from({ length: 12 }, (_, i) => String(i + 1).padStart(2, '0'));

/** A list of ours: the field look of the console's inputs, its width set by the caller (never the container's). */
export const SELECT = 'rounded border border-slate-400 bg-white px-2 py-1.5 text-sm text-slate-900';

/** The years a list offers: `from`…`to` (this year −5 … +1 by default), the value's year always among them. */
export function yearRange(value: string, from?: number, to?: number): number[] {
  const now = new Date().getUTCFullYear();
  const [lo, hi] = [from ?? now - 5, to ?? now + 1];
  const own = Number(value.slice(0, 4));
  const first = own && own < lo ? own : lo;
  const last = own && own > hi ? own : hi;
  return Array.from({ length: last - first + 1 }, (_, i) => last - i);
}

/** The month names and year numbers of the page's language. */
export function useCalendarWords() {
  const format = useFormatter();
  return {
    monthName: (mm: string) => format.dateTime(new Date(Date.UTC(2026, Number(mm) - 1, 1)), { month: 'long', timeZone: 'UTC' }),
    year: (y: number) => format.number(y, { useGrouping: false }),
    day: (d: number) => format.number(d),
  };
}

export function MonthInput({
  id,
  label,
  value,
  onChange,
  fromYear,
  toYear,
  optional = false,
  hint,
}: {
  /** The month list's id (the year list's is `${id}-year`). */
  id: string;
  label: ReactNode;
  value: string;
  onChange: (value: string) => void;
  fromYear?: number;
  toYear?: number;
  /** An empty choice ("—") is offered, and choosing it gives "". */
  optional?: boolean;
  hint?: ReactNode;
}) {
  const t = useTranslations('input');
  const words = useCalendarWords();
  const [parts, setParts] = useState(() => ({ y: value.slice(0, 4), m: value.slice(5, 7) }));
  useEffect(() => setParts({ y: value.slice(0, 4), m: value.slice(5, 7) }), [value]);
  const set = (next: { y: string; m: string }) => {
    setParts(next);
    if (next.y && next.m) onChange(`${next.y}-${next.m}`);
    else if (optional) onChange('');
  };
  const empty = optional || !value;
  return (
    <div role="group" aria-labelledby={`${id}-label`} className="text-sm" data-testid={`${id}-group`}>
      <span id={`${id}-label`} className="block font-medium text-slate-800">
        {label}
      </span>
      <div className="mt-1 flex flex-wrap gap-2">
        <select id={id} aria-label={t('month')} value={parts.m} onChange={(e) => set({ ...parts, m: e.target.value })} className={`${SELECT} w-36`}>
          {empty && <option value="">{t('unset')}</option>}
          {MONTHS.map((m) => (
            <option key={m} value={m}>
              {words.monthName(m)}
            </option>
          ))}
        </select>
        <select id={`${id}-year`} aria-label={t('year')} value={parts.y} onChange={(e) => set({ ...parts, y: e.target.value })} className={`${SELECT} w-24`}>
          {empty && <option value="">{t('unset')}</option>}
          {yearRange(value, fromYear, toYear).map((y) => (
            <option key={y} value={String(y)}>
              {words.year(y)}
            </option>
          ))}
        </select>
      </div>
      {hint && <p className="mt-1 text-xs text-slate-600">{hint}</p>}
    </div>
  );
}

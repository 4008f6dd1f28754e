'use client';
/**
 * A calendar day of ours, in the page's language: day, month name and year as three lists
 * ("৫" "মার্চ" "১৯৯০"), never the browser's own picker ("mm/dd/yyyy" in the browser's language).
 * Only real days can be chosen (the day list follows the month and year). The value is
 * "1990-03-05", or "" while the day is not complete.
 */
import { useTranslations } from 'next-intl';
import { useEffect, useState, type ReactNode } from 'react';
import { SELECT, useCalendarWords, yearRange } from './month-input.tsx';

const MONTHS = Array.from({ length: 12 }, (_, i) => String(i + 1).padStart(2, '0'));

function daysIn(y: string, m: string): number {
  if (!m) return 31;
  return new Date(Date.UTC(Number(y) || 2024, Number(m), 0)).getUTCDate();
}

const partsOf = (v: string) => ({ y: v.slice(0, 4), m: v.slice(5, 7), d: v.slice(8, 10) });

export function DateInput({
  id,
  label,
  value,
  onChange,
  fromYear,
  toYear,
  describedBy,
  invalid,
}: {
  /** The day list's id (the month's and year's are `${id}-month`, `${id}-year`). */
  id: string;
  label: ReactNode;
  value: string;
  onChange: (value: string) => void;
  fromYear?: number;
  toYear?: number;
  describedBy?: string;
  invalid?: boolean;
}) {
  const t = useTranslations('input');
  const words = useCalendarWords();
  const [parts, setParts] = useState(() => partsOf(value));
  useEffect(() => setParts(partsOf(value)), [value]);
  const set = (next: { y: string; m: string; d: string }) => {
    // A day past the month's end (31 → February) becomes its last day.
    const max = daysIn(next.y, next.m);
    const fixed = next.d && Number(next.d) > max ? { ...next, d: String(max).padStart(2, '0') } : next;
    setParts(fixed);
    onChange(fixed.y && fixed.m && fixed.d ? `${fixed.y}-${fixed.m}-${fixed.d}` : '');
  };
  const common = { 'aria-describedby': describedBy, 'aria-invalid': invalid || undefined } as const;
  const cls = `${SELECT} ${invalid ? 'border-red-600' : ''}`;
  return (
    <div role="group" aria-labelledby={`${id}-label`} className="text-sm" data-testid={`${id}-group`}>
      <span id={`${id}-label`} className="block font-medium text-slate-800">
        {label}
      </span>
      <div className="mt-1 flex flex-wrap gap-2">
        <select id={id} aria-label={t('day')} value={parts.d} onChange={(e) => set({ ...parts, d: e.target.value })} className={`${cls} w-20`} {...common}>
          <option value="">{t('unset')}</option>
          {Array.from({ length: daysIn(parts.y, parts.m) }, (_, i) => i + 1).map((d) => (
            <option key={d} value={String(d).padStart(2, '0')}>
              {words.day(d)}
            </option>
          ))}
        </select>
        <select
          id={`${id}-month`}
          aria-label={t('month')}
          value={parts.m}
          onChange={(e) => set({ ...parts, m: e.target.value })}
          className={`${cls} w-36`}
          {...common}
        >
          <option value="">{t('unset')}</option>
          {MONTHS.map((m) => (
            <option key={m} value={m}>
              {words.monthName(m)}
            </option>
          ))}
        </select>
        <select
          id={`${id}-year`}
          aria-label={t('year')}
          value={parts.y}
          onChange={(e) => set({ ...parts, y: e.target.value })}
          className={`${cls} w-24`}
          {...common}
        >
          <option value="">{t('unset')}</option>
          {yearRange(value, fromYear, toYear).map((y) => (
            <option key={y} value={String(y)}>
              {words.year(y)}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}

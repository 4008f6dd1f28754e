'use client';
/**
 * Numbers, months and times in the page's language (Intl through next-intl's formatter). In
 * Bengali, digits are Bengali (০১২…, Intl's default for `bn`), except in codes, ids and
 * addresses, which are shown as they are. Every time has ONE format and names its zone:
 * "3 Dec 2026, 14:05 (Dhaka time)" / "৩ ডিসে, ২০২৬, ১৪:০৫ (ঢাকা সময়)".
 */
import { MONTH_PATTERN as MONTH } from '@beton/db/month';
import { useFormatter, useLocale, useTranslations, type NumberFormatOptions } from 'next-intl';
import { useMemo } from 'react';
import { TIME_ZONE } from '../i18n/config.ts';

const BENGALI_DIGITS = '০১২৩৪৫৬৭৮৯';

/** Latin digits as Bengali digits ("12:05" → "১২:০৫"): for sentences the server wrote in Bengali. */
export function bengaliDigits(text: string): string {
  return text.replace(/[0-9]/g, (d) => BENGALI_DIGITS[Number(d)]!);
}

type NumberOptions = NumberFormatOptions;

export function useFmt() {
  const format = useFormatter();
  const locale = useLocale();
  const t = useTranslations('time');
  return useMemo(() => {
    const zoneName = (timeZone: string) => (timeZone === 'Asia/Dhaka' ? t('dhaka') : timeZone === 'UTC' ? t('utc') : timeZone);
    return {
      locale,
      /** 49,992 / ৪৯,৯৯২ */
      num: (n: number, options?: NumberOptions) => format.number(n, options ?? {}),
      /** Taka with paisa: "BDT 25,000.50" / "২৫,০০০.৫০৳" (the sign ৳ is a Bengali letter: English pages write BDT). */
      money: (n: number) => format.number(n, { style: 'currency', currency: 'BDT', minimumFractionDigits: 2, maximumFractionDigits: 2 }),
      /** "November 2026" / "নভেম্বর ২০২৬" of "2026-11" (anything else as it is). */
      month: (ym: string) => {
        const m = MONTH.exec(ym);
        return m ? format.dateTime(new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)), { month: 'long', year: 'numeric', timeZone: 'UTC' }) : ym;
      },
      /** The one date format, with the zone named. */
      when: (d: Date | string | null | undefined, timeZone: string = TIME_ZONE) => {
        if (!d) return '—';
        const text = format.dateTime(new Date(d), {
          timeZone,
          day: 'numeric',
          month: 'short',
          year: 'numeric',
          hour: '2-digit',
          minute: '2-digit',
          hourCycle: 'h23',
        });
        return t('withZone', { time: text, zone: zoneName(timeZone) });
      },
      /** A sentence made by the server in Bengali, with Bengali digits when the page is in Bengali. */
      serverText: (en: string, bn: string) => (locale === 'bn' ? bengaliDigits(bn) : en),
      /** "45 s" / "12 min" / "1.5 h" */
      age: (seconds: number | null) => {
        if (seconds === null) return '—';
        if (seconds < 60) return format.number(Math.round(seconds), { style: 'unit', unit: 'second', unitDisplay: 'short' });
        if (seconds < 3600) return format.number(Math.round(seconds / 60), { style: 'unit', unit: 'minute', unitDisplay: 'short' });
        return format.number(seconds / 3600, { style: 'unit', unit: 'hour', unitDisplay: 'short', maximumFractionDigits: 1 });
      },
      /** "1,000 ms" / "১,০০০ মিলিসেকেন্ড" (Intl has no Bengali name for the unit). */
      ms: (ms: number) => t('ms', { n: format.number(ms) }),
      /** A span as the run card says it: "2 days 1 hr" / "6 hr 19 min" / "12 min" / "40 sec" (its sign ignored). */
      duration: (ms: number) => {
        const unit = (n: number, u: 'day' | 'hour' | 'minute' | 'second') =>
          format.number(n, { style: 'unit', unit: u, unitDisplay: u === 'day' ? 'long' : 'short' });
        const s = Math.round(Math.abs(ms) / 1000);
        const h = Math.floor(s / 3600);
        const m = Math.floor((s % 3600) / 60);
        if (h >= 48) return `${unit(Math.floor(h / 24), 'day')} ${unit(h % 24, 'hour')}`;
        if (h > 0) return `${unit(h, 'hour')} ${unit(m, 'minute')}`;
        if (m > 0) return unit(m, 'minute');
        return unit(s, 'second');
      },
    };
  }, [format, locale, t]);
}

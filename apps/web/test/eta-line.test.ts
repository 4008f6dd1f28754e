/**
 * The run card's estimate line is written by the console in the viewer's language (issue 22):
 * its times in the console's one date format with the zone named, numbers and durations per
 * language — Bengali digits on a Bengali page — not a date format the server wrote.
 * Rendered with React's server renderer inside next-intl's provider, as the page renders it.
 */
import type { EtaFacts } from '@beton/dashboard/runs';
import { NextIntlClientProvider } from 'next-intl';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import bn from '../messages/bn.json' with { type: 'json' };
import en from '../messages/en.json' with { type: 'json' };
import { EtaLine } from '../src/components/eta-line.tsx';
import { TIME_ZONE } from '../src/i18n/config.ts';

const line = (locale: 'en' | 'bn', facts: EtaFacts) =>
  renderToStaticMarkup(
    createElement(NextIntlClientProvider, { locale, messages: locale === 'en' ? en : bn, timeZone: TIME_ZONE, children: createElement(EtaLine, { facts }) }),
  );

const base: EtaFacts = {
  case: 'on-time',
  total: 1200,
  failed: 0,
  completedAt: null,
  deadline: new Date('2026-12-01T03:00:00Z'),
  timeZone: 'Asia/Dhaka',
  passedMs: 0,
  basis: 'run-rate',
  rate: 2.54,
  finishAt: new Date('2026-11-30T20:41:00Z'),
  marginMs: (6 * 60 + 19) * 60_000,
};

describe('the run card estimate line', () => {
  it('on time: the one date format with the zone named, in English and in Bengali (Bengali digits)', () => {
    expect(line('en', base)).toBe(
      'At this run’s rate (2.5 slips/s) finishes at Dec 1, 2026, 02:41 (Dhaka time), 6 hr 19 min before the deadline of Dec 1, 2026, 09:00 (Dhaka time)',
    );
    const bengali = line('bn', base);
    expect(bengali).toMatch(/^এই রানের গতিতে \(২\.৫ স্লিপ\/সেকেন্ড\) /);
    expect(bengali).toContain('০২:৪১ (ঢাকা সময়)');
    expect(bengali).toContain('০৯:০০ (ঢাকা সময়)');
    expect(bengali).not.toMatch(/[0-9]/);
  });

  it('done, late, a deadline already behind (said once, calmly), and no rate yet', () => {
    const done = { ...base, case: 'done' as const, total: 49_992, failed: 2, completedAt: new Date('2026-12-01T01:05:00Z') };
    expect(line('en', done)).toBe('All 49,992 slips handled, completed at Dec 1, 2026, 07:05 (Dhaka time); 2 need attention');
    expect(line('bn', done)).toBe('সব ৪৯,৯৯২টি স্লিপ সম্পন্ন, শেষ হয়েছে ১ ডিসে, ২০২৬, ০৭:০৫ (ঢাকা সময়); ২টিতে মনোযোগ দরকার');
    expect(line('en', { ...done, failed: 1 })).toMatch(/; 1 needs attention$/);
    const late = { ...base, case: 'late' as const, basis: 'queue' as const, rate: 12, finishAt: new Date('2026-12-01T05:00:00Z'), marginMs: -2 * 3600_000 };
    expect(line('en', late)).toBe(
      'Warning: from the queue ahead (12 slips/s sent now) finishes at Dec 1, 2026, 11:00 (Dhaka time), 2 hr 0 min after the deadline of Dec 1, 2026, 09:00 (Dhaka time)',
    );
    // The deadline was behind before the run started (last month's run started today): one calm sentence, the deadline named once.
    const after = {
      ...base,
      case: 'after-deadline' as const,
      passedMs: 5 * 24 * 3600_000,
      finishAt: new Date('2026-12-06T08:05:00Z'),
      marginMs: -5 * 24 * 3600_000,
    };
    const calm = line('en', after);
    expect(calm).toBe(
      'The deadline, Dec 1, 2026, 09:00 (Dhaka time), has passed; the slips still go out. At this run’s rate (2.5 slips/s) the last goes at Dec 6, 2026, 14:05 (Dhaka time).',
    );
    expect(calm).not.toMatch(/Warning|ago|after the deadline/);
    expect(line('bn', after)).toBe(
      'সময়সীমা ১ ডিসে, ২০২৬, ০৯:০০ (ঢাকা সময়) পেরিয়ে গেছে; স্লিপগুলো তবুও যাবে। এই রানের গতিতে (২.৫ স্লিপ/সেকেন্ড) শেষটি যাবে ৬ ডিসে, ২০২৬, ১৪:০৫ (ঢাকা সময়)-এ।',
    );
    expect(line('bn', { ...base, case: 'no-rate', rate: null })).toBe('গত ৫ মিনিটে কোনো স্লিপ পাঠানো হয়নি, তাই এখনও অনুমান নেই');
  });
});

'use client';
import type { EtaFacts } from '@beton/dashboard/runs';
import { useTranslations } from 'next-intl';
import { useFmt } from '../lib/format.ts';

/** The estimate line in the viewer's language: its times in the one date format (zone named), numbers and durations per language. */
export function EtaLine({ facts: f }: { facts: EtaFacts }) {
  const t = useTranslations('runs.eta');
  const { num, when, duration } = useFmt();
  const at = (d: Date) => when(d, f.timeZone);
  const deadline = at(f.deadline);
  // A deadline already behind is said once and calmly (no "ago", no "after the deadline" again).
  const passed = f.passedMs > 0 ? t('pastDeadline', { deadline }) : '';
  const rate = f.rate === null ? '' : num(f.rate, { minimumFractionDigits: f.rate < 10 ? 1 : 0, maximumFractionDigits: f.rate < 10 ? 1 : 0 });
  const basis = f.basis === 'queue' ? 'queue' : 'run';
  switch (f.case) {
    case 'done':
      return t('done', { total: num(f.total), completed: f.completedAt ? 'yes' : 'no', when: f.completedAt ? at(f.completedAt) : '', failed: f.failed });
    case 'measuring':
      return t('measuring', { passed });
    case 'no-rate':
      return t('noRate', { passed });
    case 'over-a-week':
      return f.passedMs > 0 ? t('overAWeekAfterDeadline', { passed, basis, rate }) : t('overAWeek', { basis, rate, deadline });
    case 'after-deadline':
      return t('afterDeadline', { passed, basis, rate, finish: f.finishAt ? at(f.finishAt) : '—' });
    case 'on-time':
    case 'late':
      return t(f.case === 'late' ? 'late' : 'onTime', {
        basis,
        rate,
        deadline,
        finish: f.finishAt ? at(f.finishAt) : '—',
        margin: duration(f.marginMs ?? 0),
      });
  }
}

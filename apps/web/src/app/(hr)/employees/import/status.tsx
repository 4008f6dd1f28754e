'use client';
import { useTranslations } from 'next-intl';

/** An import's status badge in the page's language (messages `importStatus`); colours meet WCAG AA. */
const COLORS = {
  uploaded: 'bg-slate-100 text-slate-800',
  validating: 'bg-sky-100 text-sky-900',
  validated: 'bg-amber-100 text-amber-900',
  applying: 'bg-indigo-100 text-indigo-900',
  applied: 'bg-emerald-100 text-emerald-900',
  failed: 'bg-red-100 text-red-900',
} as const;

/**
 * `counts`: a checked import whose rows add or change nothing is not "waiting for you": it says
 * there is nothing to apply.
 */
export function ImportStatus({ status, counts }: { status: keyof typeof COLORS; counts?: { new: number; changed: number } }) {
  const t = useTranslations('importStatus');
  const nothing = status === 'validated' && counts !== undefined && counts.new + counts.changed === 0;
  return (
    <span
      data-testid="import-status"
      data-status={status}
      className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${nothing ? 'bg-slate-100 text-slate-800' : COLORS[status]}`}
    >
      {nothing ? t('nothingToApply') : t(status)}
    </span>
  );
}

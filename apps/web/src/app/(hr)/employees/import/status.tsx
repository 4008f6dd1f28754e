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

export function ImportStatus({ status }: { status: keyof typeof COLORS }) {
  const t = useTranslations('importStatus');
  return (
    <span data-testid="import-status" data-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${COLORS[status]}`}>
      {t(status)}
    </span>
  );
}

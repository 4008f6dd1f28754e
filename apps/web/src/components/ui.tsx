'use client';
/** The console's small building blocks (cards, buttons, status badges, pager), in the page's language. */
import { CONSOLE_TIME_ZONE } from '@beton/dashboard/time';
import { useLocale, useTranslations } from 'next-intl';
import type { ReactNode } from 'react';
import { useFmt } from '../lib/format.ts';

/**
 * A label given in both languages, shown in the page's language only. For pages whose strings
 * are not yet in messages/*.json; new strings go into the catalogue (docs/dashboard.md, "Languages").
 */
export function L({ en, bn }: { en: string; bn: string }) {
  return useLocale() === 'bn' ? <>{bn}</> : <>{en}</>;
}

export function Card({ children, className = '', ...props }: React.HTMLAttributes<HTMLElement> & { children: ReactNode }) {
  return (
    <section {...props} className={`rounded-lg border border-slate-200 bg-white p-4 shadow-sm ${className}`}>
      {children}
    </section>
  );
}

/** Colours with at least 4.5:1 contrast between text and badge (WCAG AA). */
const STATUS_COLORS: Record<string, string> = {
  sent: 'bg-emerald-100 text-emerald-900',
  done: 'bg-emerald-100 text-emerald-900',
  rendered: 'bg-sky-100 text-sky-900',
  queued: 'bg-slate-100 text-slate-800',
  running: 'bg-sky-100 text-sky-900',
  retrying: 'bg-amber-100 text-amber-900',
  rendering: 'bg-sky-100 text-sky-900',
  sending: 'bg-indigo-100 text-indigo-900',
  completed: 'bg-emerald-100 text-emerald-900',
  failed: 'bg-red-100 text-red-900',
  none: 'bg-slate-100 text-slate-700',
  superseded: 'bg-slate-100 text-slate-700 line-through',
  delayed: 'bg-violet-100 text-violet-900',
  paused: 'bg-amber-100 text-amber-900',
};

/** Every status the pages show (jobs, slips, resend stages, runs, attempts): messages `status.*`. */
export const STATUS_NAMES = [
  'none',
  'queued',
  'running',
  'retrying',
  'done',
  'failed',
  'rendered',
  'sent',
  'rendering',
  'sending',
  'enqueuing',
  'completed',
  'handed_back',
  'recovered',
  'superseded',
  'delayed',
  'paused',
] as const;

/** A status name as plain text in the page's language (for <option>s); unknown names as they are. */
export function useStatusText(): (status: string) => string {
  const t = useTranslations('status');
  return (status) => ((STATUS_NAMES as readonly string[]).includes(status) ? t(status as (typeof STATUS_NAMES)[number]) : status);
}

export function StatusLabel({ status }: { status: string }) {
  return <>{useStatusText()(status)}</>;
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <span data-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${STATUS_COLORS[status] ?? 'bg-slate-100 text-slate-800'}`}>
      <StatusLabel status={status} />
    </span>
  );
}

/** Prev / Next under a paged table, with "first–last of total". */
export function Pager({ offset, pageSize, total, onOffset }: { offset: number; pageSize: number; total: number; onOffset: (offset: number) => void }) {
  const t = useTranslations('common');
  const { num } = useFmt();
  return (
    <nav aria-label={t('pages')} className="flex flex-wrap items-center gap-3 text-sm">
      <Button variant="secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        ← {t('prev')}
      </Button>
      <span>{t('range', { first: num(total === 0 ? 0 : offset + 1), last: num(Math.min(offset + pageSize, total)), total: num(total) })}</span>
      <Button variant="secondary" disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)}>
        {t('next')} →
      </Button>
    </nav>
  );
}

export function Button({
  children,
  variant = 'primary',
  ...props
}: React.ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'danger' }) {
  const styles = {
    primary: 'bg-indigo-600 text-white hover:bg-indigo-700',
    secondary: 'border border-slate-400 bg-white text-slate-900 hover:bg-slate-50',
    danger: 'bg-red-700 text-white hover:bg-red-800',
  }[variant];
  return (
    <button
      type="button"
      {...props}
      className={`rounded px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 disabled:opacity-50 ${styles} ${props.className ?? ''}`}
    >
      {children}
    </button>
  );
}

/** A labelled form field: the label names the control, a hint and an error are linked to it (aria-describedby). */
export function Field({
  label,
  id,
  hint,
  error,
  children,
  className = '',
}: {
  label: ReactNode;
  id: string;
  hint?: ReactNode;
  error?: string | null;
  children: ReactNode;
  className?: string;
}) {
  return (
    <div className={`text-sm ${className}`}>
      <label htmlFor={id} className="block font-medium text-slate-800">
        {label}
      </label>
      {children}
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-slate-600">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} role="alert" className="mt-1 text-red-700">
          {error}
        </p>
      )}
    </div>
  );
}

export const INPUT = 'mt-1 block w-full rounded border border-slate-400 bg-white px-2 py-1.5 text-slate-900';

/** @deprecated English-only; use `useFmt().when` (the page's language, zone named). */
export function fmtTime(d: Date | string | null | undefined): string {
  if (!d) return '—';
  return `${new Date(d).toLocaleString('en-GB', { timeZone: CONSOLE_TIME_ZONE, day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })} (Dhaka time)`;
}

import { CONSOLE_TIME_ZONE } from '@beton/dashboard/time';
import type { ReactNode } from 'react';

/** A bilingual label: English · বাংলা. */
export function L({ en, bn }: { en: string; bn: string }) {
  return <>{en} <span lang="bn" className="opacity-70">· {bn}</span></>;
}

export function Card({ children, className = '' }: { children: ReactNode; className?: string }) {
  return <section className={`rounded-lg border border-slate-200 bg-white p-4 shadow-sm ${className}`}>{children}</section>;
}

const STATUS_COLORS: Record<string, string> = {
  sent: 'bg-emerald-100 text-emerald-800', done: 'bg-emerald-100 text-emerald-800', rendered: 'bg-sky-100 text-sky-800',
  queued: 'bg-slate-100 text-slate-700', running: 'bg-sky-100 text-sky-800', retrying: 'bg-amber-100 text-amber-800',
  rendering: 'bg-sky-100 text-sky-800', sending: 'bg-indigo-100 text-indigo-800', completed: 'bg-emerald-100 text-emerald-800',
  failed: 'bg-red-100 text-red-800', none: 'bg-slate-50 text-slate-400', superseded: 'bg-slate-100 text-slate-500 line-through',
  delayed: 'bg-violet-100 text-violet-800',
};

/** Every status the pages show (jobs, slips, resend stages, runs, attempts), in both languages. */
const STATUS_LABELS: Record<string, { en: string; bn: string }> = {
  none: { en: 'none', bn: 'নেই' },
  queued: { en: 'queued', bn: 'অপেক্ষমাণ' },
  running: { en: 'running', bn: 'চলছে' },
  retrying: { en: 'retrying', bn: 'আবার চেষ্টা' },
  done: { en: 'done', bn: 'সম্পন্ন' },
  failed: { en: 'failed', bn: 'ব্যর্থ' },
  rendered: { en: 'rendered', bn: 'তৈরি হয়েছে' },
  sent: { en: 'sent', bn: 'পাঠানো হয়েছে' },
  rendering: { en: 'rendering', bn: 'তৈরি হচ্ছে' },
  sending: { en: 'sending', bn: 'পাঠানো হচ্ছে' },
  enqueuing: { en: 'enqueuing', bn: 'সারিতে তোলা হচ্ছে' },
  completed: { en: 'completed', bn: 'শেষ' },
  handed_back: { en: 'handed back', bn: 'ফেরত দেওয়া' },
  recovered: { en: 'recovered', bn: 'উদ্ধার করা' },
  superseded: { en: 'superseded', bn: 'অন্য চেষ্টায় সম্পন্ন' },
  delayed: { en: 'delayed', bn: 'নির্ধারিত সময়ে' },
};

/** A status name as plain text, "sent · পাঠানো হয়েছে" (for <option>s, which hold no markup). */
export function statusText(status: string): string {
  const label = STATUS_LABELS[status];
  return label ? `${label.en} · ${label.bn}` : status;
}

/** A status name in English · Bengali (unknown names as they are). */
export function StatusLabel({ status }: { status: string }) {
  const label = STATUS_LABELS[status];
  return label ? <L en={label.en} bn={label.bn} /> : <>{status}</>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span data-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${STATUS_COLORS[status] ?? 'bg-slate-100'}`}><StatusLabel status={status} /></span>;
}

/** Prev / Next under a paged table, with "first–last / total". */
export function Pager({ offset, pageSize, total, onOffset }: { offset: number; pageSize: number; total: number; onOffset: (offset: number) => void }) {
  return (
    <div className="flex items-center gap-3 text-sm">
      <Button variant="secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>← <L en="Prev" bn="আগের" /></Button>
      <span>{total === 0 ? 0 : offset + 1}–{Math.min(offset + pageSize, total)} / {total}</span>
      <Button variant="secondary" disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)}><L en="Next" bn="পরের" /> →</Button>
    </div>
  );
}

export function Button({ children, variant = 'primary', ...props }: React.ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'danger' }) {
  const styles = {
    primary: 'bg-indigo-600 text-white hover:bg-indigo-700',
    secondary: 'border border-slate-300 bg-white hover:bg-slate-50',
    danger: 'bg-red-600 text-white hover:bg-red-700',
  }[variant];
  return <button {...props} className={`rounded px-3 py-1.5 text-sm font-medium disabled:opacity-50 ${styles} ${props.className ?? ''}`}>{children}</button>;
}

export function fmtTime(d: Date | string | null | undefined): string {
  if (!d) return '—';
  return new Date(d).toLocaleString('en-GB', { timeZone: CONSOLE_TIME_ZONE, dateStyle: 'short', timeStyle: 'medium' });
}

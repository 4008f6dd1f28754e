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
  failed: 'bg-red-100 text-red-800', none: 'bg-slate-50 text-slate-400',
};
export function StatusBadge({ status }: { status: string }) {
  return <span data-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${STATUS_COLORS[status] ?? 'bg-slate-100'}`}>{status}</span>;
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
  return new Date(d).toLocaleString('en-GB', { timeZone: 'Asia/Dhaka', dateStyle: 'short', timeStyle: 'medium' });
}

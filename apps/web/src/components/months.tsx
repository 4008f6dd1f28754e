'use client';
/**
 * Pieces shared by the months pages (issue 22): month names and statuses of transfers and
 * exports, in English and Bengali. Every user-visible string is in `MONTH_MESSAGES`, to move
 * into the i18n catalogue as one block.
 */
import { L } from './ui.tsx';

export const MONTH_MESSAGES = {
  transfer: {
    none: { en: 'no transfer', bn: 'স্থানান্তর নেই' },
    pending: { en: 'pending', bn: 'অপেক্ষমাণ' },
    submitted: { en: 'at the bank', bn: 'ব্যাংকে জমা' },
    credited: { en: 'credited', bn: 'জমা হয়েছে' },
  },
  exportStatus: {
    queued: { en: 'waiting', bn: 'অপেক্ষমাণ' },
    building: { en: 'building', bn: 'তৈরি হচ্ছে' },
    ready: { en: 'ready', bn: 'প্রস্তুত' },
    failed: { en: 'failed', bn: 'ব্যর্থ' },
    expired: { en: 'expired', bn: 'মেয়াদ শেষ' },
  },
} as const;

const TONE: Record<string, string> = {
  none: 'bg-slate-100 text-slate-700', pending: 'bg-amber-100 text-amber-900', submitted: 'bg-sky-100 text-sky-900', credited: 'bg-emerald-100 text-emerald-900',
  queued: 'bg-slate-100 text-slate-700', building: 'bg-sky-100 text-sky-900', ready: 'bg-emerald-100 text-emerald-900', failed: 'bg-red-100 text-red-900', expired: 'bg-slate-100 text-slate-700',
};

export function TransferBadge({ status }: { status: keyof typeof MONTH_MESSAGES.transfer }) {
  return <span data-transfer={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${TONE[status]}`}><L {...MONTH_MESSAGES.transfer[status]} /></span>;
}

export function ExportBadge({ status }: { status: keyof typeof MONTH_MESSAGES.exportStatus }) {
  return <span data-export-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${TONE[status]}`}><L {...MONTH_MESSAGES.exportStatus[status]} /></span>;
}

/** "November 2026" and "নভেম্বর ২০২৬" from '2026-11'. */
export function monthName(month: string): { en: string; bn: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1, 1));
  const f = (locale: string) => d.toLocaleDateString(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' });
  return { en: f('en-GB'), bn: f('bn-BD') };
}

export const taka = (n: number) => `৳ ${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

'use client';
/**
 * Pieces shared by the months pages (issue 22): the statuses of bank transfers and exports as
 * badges in the page's language (messages `transfer`, `exportStatus`; colours meet WCAG AA).
 * Month names and amounts come from `useFmt()` (lib/format.ts).
 */
import { useTranslations } from 'next-intl';

const TONE = {
  none: 'bg-slate-100 text-slate-800',
  pending: 'bg-amber-100 text-amber-900',
  submitted: 'bg-sky-100 text-sky-900',
  credited: 'bg-emerald-100 text-emerald-900',
  queued: 'bg-slate-100 text-slate-800',
  building: 'bg-sky-100 text-sky-900',
  ready: 'bg-emerald-100 text-emerald-900',
  failed: 'bg-red-100 text-red-900',
  expired: 'bg-slate-100 text-slate-800',
} as const;

export type TransferStatus = 'none' | 'pending' | 'submitted' | 'credited';
export type ExportStatus = 'queued' | 'building' | 'ready' | 'failed' | 'expired';

export function TransferBadge({ status }: { status: TransferStatus }) {
  const t = useTranslations('transfer');
  return (
    <span data-transfer={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${TONE[status]}`}>
      {t(status)}
    </span>
  );
}

export function ExportBadge({ status }: { status: ExportStatus }) {
  const t = useTranslations('exportStatus');
  return (
    <span data-export-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${TONE[status]}`}>
      {t(status)}
    </span>
  );
}

'use client';
import { messages } from '../fields.tsx';

/** An import's status in English and Bengali (moves to the i18n catalogue as it is). */
const M = {
  en: { uploaded: 'waiting to be checked', validating: 'checking', validated: 'checked: waiting for you', applying: 'applying', applied: 'applied', failed: 'could not be read' },
  bn: { uploaded: 'যাচাইয়ের অপেক্ষায়', validating: 'যাচাই হচ্ছে', validated: 'যাচাই শেষ: আপনার অপেক্ষায়', applying: 'প্রয়োগ হচ্ছে', applied: 'প্রয়োগ হয়েছে', failed: 'পড়া যায়নি' },
};
const T = messages(M);
const COLORS: Record<keyof typeof M.en, string> = {
  uploaded: 'bg-slate-100 text-slate-800', validating: 'bg-sky-100 text-sky-900', validated: 'bg-amber-100 text-amber-900',
  applying: 'bg-indigo-100 text-indigo-900', applied: 'bg-emerald-100 text-emerald-900', failed: 'bg-red-100 text-red-900',
};

export function ImportStatus({ status }: { status: keyof typeof M.en }) {
  return <span data-testid="import-status" data-status={status} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${COLORS[status]}`}><T k={status} /></span>;
}

'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { monthName } from '../../../components/months.tsx';
import { Card, L, StatusBadge, fmtTime } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

/** Every user-visible string of the page (English + Bengali). */
const M = {
  title: { en: 'Past months', bn: 'আগের মাসগুলো' },
  intro: { en: 'Each month\'s payroll run: its slips, its bank transfers, and the month\'s exports.', bn: 'প্রতি মাসের বেতন রান: স্লিপ, ব্যাংক স্থানান্তর এবং মাসের এক্সপোর্ট।' },
  loading: { en: 'Loading…', bn: 'লোড হচ্ছে…' },
  empty: { en: 'No payroll month yet.', bn: 'এখনও কোনো বেতন মাস নেই।' },
  month: { en: 'Month', bn: 'মাস' },
  run: { en: 'Run', bn: 'রান' },
  employees: { en: 'Employees', bn: 'কর্মচারী' },
  slipsSent: { en: 'Slips sent', bn: 'স্লিপ পাঠানো' },
  slipsFailed: { en: 'Slips failed', bn: 'স্লিপ ব্যর্থ' },
  credited: { en: 'Salaries credited', bn: 'বেতন জমা' },
  atBank: { en: 'At the bank', bn: 'ব্যাংকে' },
  started: { en: 'Started', bn: 'শুরু' },
  open: { en: 'Open', bn: 'খুলুন' },
} as const;

export default function MonthsPage() {
  const trpc = useTRPC();
  const months = useQuery(trpc.months.list.queryOptions());
  const n = (x: number) => x.toLocaleString('en-US');
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L {...M.title} /></h1>
      <p className="text-sm text-slate-600"><L {...M.intro} /></p>
      {months.isLoading && <p><L {...M.loading} /></p>}
      {months.data?.length === 0 && <Card><L {...M.empty} /></Card>}
      {!!months.data?.length && (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
          <table className="min-w-full text-sm" data-testid="months-table">
            <thead className="bg-slate-50 text-left text-slate-700"><tr>
              <th className="p-2"><L {...M.month} /></th><th className="p-2"><L {...M.run} /></th><th className="p-2 text-right"><L {...M.employees} /></th>
              <th className="p-2 text-right"><L {...M.slipsSent} /></th><th className="p-2 text-right"><L {...M.slipsFailed} /></th>
              <th className="p-2 text-right"><L {...M.credited} /></th><th className="p-2 text-right"><L {...M.atBank} /></th><th className="p-2"><L {...M.started} /></th>
            </tr></thead>
            <tbody>
              {months.data.map((m) => {
                const name = monthName(m.month);
                return (
                  <tr key={m.runId} data-testid="month-row" data-month={m.month} className="border-t border-slate-100">
                    <td className="p-2 font-medium"><Link className="text-indigo-700 underline" href={`/months/${m.month}`}><L en={name.en} bn={name.bn} /></Link></td>
                    <td className="p-2"><StatusBadge status={m.status} /></td>
                    <td className="p-2 text-right">{n(m.employeeCount)}</td>
                    <td className="p-2 text-right">{n(m.slipsSent)}</td>
                    <td className={`p-2 text-right ${m.slipsFailed ? 'font-semibold text-red-700' : ''}`}>{n(m.slipsFailed)}</td>
                    <td className="p-2 text-right">{n(m.transfers.credited)}</td>
                    <td className="p-2 text-right">{n(m.transfers.submitted + m.transfers.pending)}</td>
                    <td className="p-2 whitespace-nowrap">{fmtTime(m.startedAt)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useSearchParams } from 'next/navigation';
import { Suspense, useEffect, useState } from 'react';
import { Card, L, Pager, StatusBadge, statusText } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

const STATUSES = ['', 'none', 'queued', 'running', 'retrying', 'rendered', 'sent', 'failed'] as const;
const PAGE = 25;

function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

/** `?month=2026-11&status=failed` opens the list filtered (the run card's "32 need attention" links here). */
export default function EmployeesPage() {
  return <Suspense><Employees /></Suspense>;
}

function Employees() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const runs = useQuery(trpc.runs.list.queryOptions());
  const [month, setMonth] = useState<string | null>(() => (/^\d{4}-(0[1-9]|1[0-2])$/.test(params.get('month') ?? '') ? params.get('month') : null));
  const [search, setSearch] = useState('');
  const [debounced, setDebounced] = useState('');
  const [status, setStatus] = useState<(typeof STATUSES)[number]>(() => (STATUSES as readonly string[]).includes(params.get('status') ?? '') ? (params.get('status') as (typeof STATUSES)[number]) : '');
  const [offset, setOffset] = useState(0);
  useEffect(() => { const t = setTimeout(() => { setDebounced(search); setOffset(0); }, 250); return () => clearTimeout(t); }, [search]);
  const effectiveMonth = month ?? runs.data?.[0]?.month ?? (runs.isLoading ? null : thisMonth());
  const list = useQuery({
    ...trpc.employees.list.queryOptions({ month: effectiveMonth ?? thisMonth(), search: debounced || undefined, status: status || undefined, limit: PAGE, offset }),
    enabled: effectiveMonth !== null,
    placeholderData: keepPreviousData,
  });
  const total = list.data?.total ?? 0;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold"><L en="Employees" bn="কর্মচারী" /></h1>
        <Link href="/employees/new" data-testid="add-employee" className="ml-auto rounded bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700"><L en="Add employee" bn="কর্মচারী যোগ" /></Link>
        <Link href="/employees/import" data-testid="import-employees" className="rounded border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium hover:bg-slate-50"><L en="Import" bn="ইমপোর্ট" /></Link>
      </div>
      <Card className="flex flex-wrap items-end gap-3">
        <label className="text-sm"><L en="Search" bn="খুঁজুন" />
          <input aria-label="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="name, code, email · নাম, কোড, ইমেইল" className="mt-1 block w-56 rounded border border-slate-300 px-2 py-1" />
        </label>
        <label className="text-sm"><L en="Slip status" bn="স্লিপের অবস্থা" />
          <select aria-label="status" value={status} onChange={(e) => { setStatus(e.target.value as typeof status); setOffset(0); }} className="mt-1 block rounded border border-slate-300 px-2 py-1">
            {STATUSES.map((s) => <option key={s} value={s}>{s ? statusText(s) : 'all · সব'}</option>)}
          </select>
        </label>
        <label className="text-sm"><L en="Month" bn="মাস" />
          <input aria-label="month" type="month" value={effectiveMonth ?? ''} onChange={(e) => { setMonth(e.target.value); setOffset(0); }} className="mt-1 block rounded border border-slate-300 px-2 py-1" />
        </label>
        <span className="ml-auto text-sm text-slate-600"><span data-testid="employee-total">{total.toLocaleString('en-US')} employees</span> <span lang="bn" className="opacity-70">· {total.toLocaleString('en-US')} জন কর্মচারী</span></span>
      </Card>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <table className="min-w-full text-sm">
          <thead className="bg-slate-50 text-left text-slate-600">
            <tr><th className="p-2"><L en="Code" bn="কোড" /></th><th className="p-2"><L en="Name" bn="নাম" /></th><th className="p-2"><L en="Email" bn="ইমেইল" /></th><th className="p-2"><L en="Slip" bn="স্লিপ" /></th></tr>
          </thead>
          <tbody>
            {list.data?.rows.map((e) => (
              <tr key={e.id} className="border-t border-slate-100 hover:bg-slate-50">
                <td className="p-2 font-mono"><Link className="text-indigo-700 underline" href={`/employees/${e.id}`}>{e.code}</Link></td>
                <td className="p-2">{e.nameLatin}{e.deactivatedAt && <span data-testid="left" className="ml-2 rounded bg-slate-200 px-1.5 text-xs text-slate-800"><L en="left" bn="চাকরি ছেড়েছেন" /></span>}<div lang="bn" className="text-xs text-slate-600">{e.nameBengali}</div></td>
                <td className="p-2 break-all">{e.email}</td>
                <td className="p-2"><StatusBadge status={e.slipStatus} />{e.lastErrorCode && <span className="ml-1 text-xs text-red-700">{e.lastErrorCode}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager offset={offset} pageSize={PAGE} total={total} onOffset={setOffset} />
    </div>
  );
}

'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useState } from 'react';
import { ExportBadge, TransferBadge, monthName, taka } from '../../../../components/months.tsx';
import { Button, Card, L, Pager, StatusBadge, fmtTime } from '../../../../components/ui.tsx';
import { useTRPC } from '../../../../lib/trpc.tsx';

/** Every user-visible string of the page (English + Bengali). */
const M = {
  back: { en: '← Past months', bn: '← আগের মাসগুলো' },
  loading: { en: 'Loading…', bn: 'লোড হচ্ছে…' },
  employees: { en: 'Employees', bn: 'কর্মচারী' },
  slipsSent: { en: 'Slips sent', bn: 'স্লিপ পাঠানো' },
  slipsFailed: { en: 'Slips failed', bn: 'স্লিপ ব্যর্থ' },
  credited: { en: 'Credited', bn: 'জমা হয়েছে' },
  atBank: { en: 'At the bank', bn: 'ব্যাংকে' },
  pending: { en: 'Pending', bn: 'অপেক্ষমাণ' },
  exports: { en: 'Downloads', bn: 'ডাউনলোড' },
  exportsIntro: {
    en: 'Prepared in the background; each file can be downloaded for a limited time after it is ready.',
    bn: 'পেছনে তৈরি হয়; প্রস্তুত হওয়ার পর নির্দিষ্ট সময় পর্যন্ত ডাউনলোড করা যায়।',
  },
  kinds: {
    'slips-zip': { en: 'All slips (ZIP)', bn: 'সব স্লিপ (ZIP)' },
    'register-csv': { en: 'Payroll register (CSV)', bn: 'বেতন রেজিস্টার (CSV)' },
    'register-xlsx': { en: 'Payroll register (Excel)', bn: 'বেতন রেজিস্টার (Excel)' },
  },
  prepare: { en: 'Prepare', bn: 'তৈরি করুন' },
  download: { en: 'Download', bn: 'ডাউনলোড' },
  expires: { en: 'available until', bn: 'পাওয়া যাবে' },
  expiredHelp: { en: 'This download expired; prepare it again.', bn: 'এই ডাউনলোডের মেয়াদ শেষ; আবার তৈরি করুন।' },
  noExports: { en: 'Nothing prepared yet.', bn: 'এখনও কিছু তৈরি হয়নি।' },
  requestedBy: { en: 'asked by', bn: 'অনুরোধ করেছেন' },
  search: { en: 'Search code or name', bn: 'কোড বা নাম খুঁজুন' },
  code: { en: 'Code', bn: 'কোড' },
  name: { en: 'Name', bn: 'নাম' },
  net: { en: 'Net pay', bn: 'নিট বেতন' },
  slip: { en: 'Slip', bn: 'স্লিপ' },
  transfer: { en: 'Bank transfer', bn: 'ব্যাংক স্থানান্তর' },
  pdf: { en: 'PDF', bn: 'পিডিএফ' },
  total: { en: 'employees', bn: 'জন কর্মচারী' },
  part: { en: (i: number, n: number) => `part ${i} of ${n}`, bn: (i: number, n: number) => `${n}টির ${i} নম্বর অংশ` },
} as const;

const KINDS = ['slips-zip', 'register-csv', 'register-xlsx'] as const;
const PAGE = 25;

export default function MonthPage() {
  const { month } = useParams<{ month: string }>();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const detail = useQuery(trpc.months.get.queryOptions({ month, search: search || undefined, limit: PAGE, offset }));
  const exports = useQuery({
    ...trpc.months.exports.queryOptions({ month }),
    refetchInterval: (q) => (q.state.data?.some((e) => e.status === 'queued' || e.status === 'building') ? 1_000 : false),
  });
  const request = useMutation(trpc.months.requestExport.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.months.exports.queryKey({ month }) }) }));
  const name = monthName(month);
  const s = detail.data?.summary;
  const n = (x: number) => x.toLocaleString('en-US');
  return (
    <div className="space-y-4">
      <Link href="/months" className="text-sm text-indigo-700 underline"><L {...M.back} /></Link>
      <h1 className="text-2xl font-semibold" data-testid="month-title"><L en={name.en} bn={name.bn} /></h1>
      {detail.isLoading && <p><L {...M.loading} /></p>}
      {detail.error && <p role="alert" className="text-red-700">{detail.error.message}</p>}
      {s && (
        <Card>
          <dl className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-6" data-testid="month-summary">
            <div><dt className="text-slate-600"><L {...M.employees} /></dt><dd className="text-lg font-semibold">{n(s.employeeCount)}</dd></div>
            <div><dt className="text-slate-600"><L {...M.slipsSent} /></dt><dd className="text-lg font-semibold">{n(s.slipsSent)}</dd></div>
            <div><dt className="text-slate-600"><L {...M.slipsFailed} /></dt><dd className="text-lg font-semibold">{n(s.slipsFailed)}</dd></div>
            <div><dt className="text-slate-600"><L {...M.credited} /></dt><dd className="text-lg font-semibold" data-testid="credited">{n(s.transfers.credited)}</dd></div>
            <div><dt className="text-slate-600"><L {...M.atBank} /></dt><dd className="text-lg font-semibold">{n(s.transfers.submitted)}</dd></div>
            <div><dt className="text-slate-600"><L {...M.pending} /></dt><dd className="text-lg font-semibold">{n(s.transfers.pending)}</dd></div>
          </dl>
        </Card>
      )}

      <Card>
        <h2 className="font-semibold"><L {...M.exports} /></h2>
        <p className="mb-3 text-sm text-slate-600"><L {...M.exportsIntro} /></p>
        <div className="flex flex-wrap gap-2">
          {KINDS.map((kind) => (
            <Button key={kind} variant="secondary" data-kind={kind} disabled={request.isPending} onClick={() => request.mutate({ month, kind })}>
              <L en={`${M.prepare.en}: ${M.kinds[kind].en}`} bn={`${M.kinds[kind].bn} ${M.prepare.bn}`} />
            </Button>
          ))}
        </div>
        {request.error && <p role="alert" className="mt-2 text-sm text-red-700">{request.error.message}</p>}
        <ul className="mt-3 space-y-2" data-testid="exports" aria-live="polite">
          {exports.data?.length === 0 && <li className="text-sm text-slate-600"><L {...M.noExports} /></li>}
          {exports.data?.map((e) => {
            const pct = e.total ? Math.round((e.done / e.total) * 100) : e.status === 'ready' ? 100 : 0;
            const status = e.status === 'ready' && e.expired ? 'expired' : e.status;
            return (
              <li key={e.id} data-testid="export" data-kind={e.kind} data-status={status} className="rounded border border-slate-200 p-2 text-sm">
                <div className="flex flex-wrap items-center gap-2">
                  <span className="font-medium"><L {...M.kinds[e.kind]} />{e.volumes > 1 && <> · <L en={M.part.en(e.volume, e.volumes)} bn={M.part.bn(e.volume, e.volumes)} /></>}</span>
                  <ExportBadge status={status} />
                  <span className="text-slate-600">{fmtTime(e.createdAt)} · <L {...M.requestedBy} /> {e.requestedBy.replace(/^hr:/, '')}</span>
                  {status === 'ready' && (
                    <a className="ml-auto rounded bg-indigo-600 px-3 py-1 font-medium text-white hover:bg-indigo-700" href={`/api/exports/${e.id}`} download={e.filename} data-testid="export-download">
                      <L {...M.download} /> {e.filename}
                    </a>
                  )}
                </div>
                {(e.status === 'queued' || e.status === 'building') && (
                  <div className="mt-2 flex items-center gap-2">
                    <div className="h-2 flex-1 overflow-hidden rounded bg-slate-200" role="progressbar" aria-label={`${M.kinds[e.kind].en} progress`} aria-valuenow={pct} aria-valuemin={0} aria-valuemax={100}>
                      <div className="h-2 bg-indigo-600" style={{ width: `${pct}%` }} />
                    </div>
                    <span data-testid="export-progress">{n(e.done)} / {n(e.total)}</span>
                  </div>
                )}
                {status === 'ready' && e.expiresAt && <p className="mt-1 text-slate-600"><L {...M.expires} /> {fmtTime(e.expiresAt)}</p>}
                {status === 'expired' && <p className="mt-1 text-slate-700"><L {...M.expiredHelp} /></p>}
                {e.status === 'failed' && e.error && <p role="alert" className="mt-1 text-red-700">{e.error}</p>}
              </li>
            );
          })}
        </ul>
      </Card>

      <Card>
        <div className="mb-3 flex flex-wrap items-center gap-3">
          <label className="text-sm"><span className="sr-only">{M.search.en}</span>
            <input aria-label="search employees" placeholder={`${M.search.en} · ${M.search.bn}`} className="w-72 max-w-full rounded border border-slate-300 px-2 py-1"
              value={search} onChange={(e) => { setSearch(e.target.value); setOffset(0); }} />
          </label>
          {detail.data && <span data-testid="month-employee-total" className="text-sm text-slate-600">{n(detail.data.total)} <L {...M.total} /></span>}
        </div>
        <div className="overflow-x-auto">
          <table className="min-w-full text-sm" data-testid="month-employees">
            <thead className="bg-slate-50 text-left text-slate-700"><tr>
              <th className="p-2"><L {...M.code} /></th><th className="p-2"><L {...M.name} /></th><th className="p-2 text-right"><L {...M.net} /></th>
              <th className="p-2"><L {...M.slip} /></th><th className="p-2"><L {...M.transfer} /></th>
            </tr></thead>
            <tbody>
              {detail.data?.employees.map((e) => (
                <tr key={e.id} data-testid="month-employee" data-code={e.code} className="border-t border-slate-100">
                  <td className="p-2 font-mono">{e.code}</td>
                  <td className="p-2"><Link className="text-indigo-700 underline" href={`/employees/${e.id}`}>{e.nameLatin}</Link> <span lang="bn" className="text-slate-600">{e.nameBengali}</span></td>
                  <td className="p-2 text-right whitespace-nowrap">{taka(e.net)}</td>
                  <td className="p-2 whitespace-nowrap"><StatusBadge status={e.slipStatus} />{e.slipId !== null && <> <a className="text-indigo-700 underline" href={`/api/slips/${e.slipId}/pdf`} target="_blank" rel="noreferrer"><L {...M.pdf} /></a></>}</td>
                  <td className="p-2 whitespace-nowrap"><TransferBadge status={e.transferStatus} />{e.creditedAt && <span className="ml-1 text-slate-600">{fmtTime(e.creditedAt)}</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {detail.data && <div className="mt-3"><Pager offset={offset} pageSize={PAGE} total={detail.data.total} onOffset={setOffset} /></div>}
      </Card>
    </div>
  );
}

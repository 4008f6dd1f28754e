'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Button, Card, fmtTime } from '../../../../components/ui.tsx';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { messages, TextField, thisMonth } from '../fields.tsx';
import { ImportStatus } from './status.tsx';

/** Every string of this page, in English and Bengali (moves to the i18n catalogue as it is). */
const M = {
  en: {
    back: 'Employees', title: 'Import employees', file: 'CSV or Excel (.xlsx) file', month: 'Salaries take effect from (rows without effective_month)',
    upload: 'Upload and check', uploading: 'Uploading…', chooseFile: 'Choose a file first.',
    howTo: 'One row per employee, a header row with: code, name_latin, name_bengali, email, bank_account, basic, house_rent, medical, conveyance, tax, provident_fund and optionally effective_month (2026-12). An employee is matched by code: a new code adds one, a known code updates it. Nothing is written before you confirm the check.',
    previous: 'Earlier imports', file_: 'File', status: 'Status', rows: 'Rows', when: 'Uploaded', none: 'No imports yet.',
  },
  bn: {
    back: 'কর্মচারী', title: 'কর্মচারী ইমপোর্ট', file: 'CSV বা Excel (.xlsx) ফাইল', month: 'বেতন যে মাস থেকে কার্যকর (effective_month ছাড়া সারি)',
    upload: 'আপলোড ও যাচাই', uploading: 'আপলোড হচ্ছে…', chooseFile: 'আগে একটি ফাইল বেছে নিন।',
    howTo: 'প্রতি কর্মচারীর জন্য একটি সারি, শিরোনাম সারিতে: code, name_latin, name_bengali, email, bank_account, basic, house_rent, medical, conveyance, tax, provident_fund এবং ইচ্ছা হলে effective_month (2026-12)। কোড দিয়ে কর্মচারী মেলানো হয়: নতুন কোড যোগ করে, চেনা কোড হালনাগাদ করে। যাচাই নিশ্চিত করার আগে কিছুই লেখা হয় না।',
    previous: 'আগের ইমপোর্ট', file_: 'ফাইল', status: 'অবস্থা', rows: 'সারি', when: 'আপলোড', none: 'এখনও কোনো ইমপোর্ট নেই।',
  },
};
const T = messages(M);

export default function ImportPage() {
  const trpc = useTRPC();
  const router = useRouter();
  const list = useQuery(trpc.imports.list.queryOptions());
  const [file, setFile] = useState<File | null>(null);
  const [month, setMonth] = useState(thisMonth());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const upload = async () => {
    if (!file) return setError('choose');
    setBusy(true);
    setError(null);
    try {
      const type = file.name.toLowerCase().endsWith('.xlsx') ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' : 'text/csv';
      const res = await fetch(`/api/imports?${new URLSearchParams({ filename: file.name, month })}`, { method: 'POST', headers: { 'content-type': type }, body: file });
      const body = (await res.json()) as { id?: string; error?: { message: string } };
      if (!res.ok || !body.id) throw new Error(body.error?.message ?? `HTTP ${res.status}`);
      router.push(`/employees/import/${body.id}`);
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  return (
    <div className="space-y-4">
      <Link href="/employees" className="text-sm text-indigo-700 underline">← <T k="back" /></Link>
      <h1 className="text-2xl font-semibold"><T k="title" /></h1>
      <Card className="space-y-3">
        <p className="text-sm text-slate-700"><T k="howTo" /></p>
        <form noValidate className="flex flex-wrap items-end gap-4" onSubmit={(e) => { e.preventDefault(); void upload(); }}>
          <div className="text-sm">
            <label htmlFor="import-file" className="block text-slate-700"><T k="file" /></label>
            <input id="import-file" name="file" type="file" accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
              onChange={(e) => setFile(e.target.files?.[0] ?? null)} className="mt-1 block max-w-full text-sm" />
          </div>
          <div className="w-64 max-w-full"><TextField name="month" type="month" label={<T k="month" />} value={month} onChange={setMonth} /></div>
          <Button type="submit" disabled={busy}>{busy ? <T k="uploading" /> : <T k="upload" />}</Button>
        </form>
        {error && <p role="alert" data-testid="upload-error" className="text-sm text-red-700">{error === 'choose' ? <T k="chooseFile" /> : error}</p>}
      </Card>
      <h2 className="text-lg font-semibold"><T k="previous" /></h2>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <table className="min-w-full text-sm">
          <thead className="bg-slate-50 text-left text-slate-600"><tr><th className="p-2"><T k="file_" /></th><th className="p-2"><T k="status" /></th><th className="p-2"><T k="rows" /></th><th className="p-2"><T k="when" /></th></tr></thead>
          <tbody>
            {list.data?.map((i) => (
              <tr key={i.id} className="border-t border-slate-100">
                <td className="p-2 break-all"><Link className="text-indigo-700 underline" href={`/employees/import/${i.id}`}>{i.filename}</Link></td>
                <td className="p-2"><ImportStatus status={i.status} /></td>
                <td className="p-2">{i.rowsTotal ?? '—'}</td>
                <td className="p-2">{fmtTime(i.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.length === 0 && <p className="p-3 text-sm text-slate-600"><T k="none" /></p>}
      </div>
    </div>
  );
}

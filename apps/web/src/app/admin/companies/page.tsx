'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import Link from 'next/link';
import { useState } from 'react';
import { Button, Card, L, fmtTime } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

/** Every user-visible string of the page (English + Bengali). */
const M = {
  title: { en: 'Companies', bn: 'কোম্পানি' },
  create: { en: 'New company', bn: 'নতুন কোম্পানি' },
  name: { en: 'Name', bn: 'নাম' },
  timeZone: { en: 'Time zone', bn: 'সময় অঞ্চল' },
  schedule: { en: 'Payroll schedule (cron, in its time zone)', bn: 'বেতনের সময়সূচি (ক্রন)' },
  deadline: { en: 'Slips delivered by', bn: 'স্লিপ পৌঁছানোর সময়সীমা' },
  replyTo: { en: 'Reply-To email (optional)', bn: 'উত্তরের ইমেইল (ঐচ্ছিক)' },
  protect: { en: 'Password-protected slips', bn: 'পাসওয়ার্ড-সুরক্ষিত স্লিপ' },
  submit: { en: 'Create company', bn: 'কোম্পানি তৈরি করুন' },
  created: { en: 'Created', bn: 'তৈরি হয়েছে' },
  nextStep: { en: 'Next: create its HR manager on the Users page.', bn: 'এরপর: ব্যবহারকারী পাতায় এর এইচআর তৈরি করুন।' },
  users: { en: 'Users', bn: 'ব্যবহারকারী' },
  employees: { en: 'Employees', bn: 'কর্মচারী' },
  hr: { en: 'HR users', bn: 'এইচআর' },
  since: { en: 'Created', bn: 'তৈরি' },
  on: { en: 'on', bn: 'চালু' },
  off: { en: 'off', bn: 'বন্ধ' },
} as const;

export default function CompaniesPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const companies = useQuery(trpc.admin.companies.queryOptions());
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.companies.queryKey() });
  const [form, setForm] = useState({ name: '', timeZone: 'Asia/Dhaka', payrollSchedule: '0 2 1 * *', deadline: '09:00', replyToEmail: '', protectSlips: false });
  const create = useMutation(trpc.admin.createCompany.mutationOptions({ onSuccess: () => { void refresh(); setForm((f) => ({ ...f, name: '', replyToEmail: '' })); } }));
  const protect = useMutation(trpc.admin.setProtectSlips.mutationOptions({ onSuccess: () => void refresh() }));
  const fieldErrors = create.error instanceof TRPCClientError ? ((create.error.data as { fieldErrors?: Record<string, string | string[]> } | undefined)?.fieldErrors ?? {}) : {};
  const err = (k: string) => { const v = fieldErrors[k]; return v ? <span data-testid={`error-${k}`} className="block text-red-700">{Array.isArray(v) ? v[0] : v}</span> : null; };
  const input = 'mt-1 block w-full rounded border border-slate-300 px-2 py-1';
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L {...M.title} /></h1>
      <Card>
        <h2 className="mb-3 font-semibold"><L {...M.create} /></h2>
        <form className="grid gap-3 text-sm sm:grid-cols-2" onSubmit={(e) => { e.preventDefault(); create.mutate({ ...form, replyToEmail: form.replyToEmail || undefined }); }}>
          <label><L {...M.name} /><input aria-label="company name" required className={input} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />{err('name')}</label>
          <label><L {...M.timeZone} /><input aria-label="company time zone" required className={input} value={form.timeZone} onChange={(e) => setForm({ ...form, timeZone: e.target.value })} />{err('timeZone')}</label>
          <label><L {...M.schedule} /><input aria-label="payroll schedule" required className={`${input} font-mono`} value={form.payrollSchedule} onChange={(e) => setForm({ ...form, payrollSchedule: e.target.value })} />{err('payrollSchedule')}</label>
          <label><L {...M.deadline} /><input aria-label="deadline" required className={input} value={form.deadline} onChange={(e) => setForm({ ...form, deadline: e.target.value })} />{err('deadline')}</label>
          <label><L {...M.replyTo} /><input aria-label="reply-to email" type="email" className={input} value={form.replyToEmail} onChange={(e) => setForm({ ...form, replyToEmail: e.target.value })} />{err('replyToEmail')}</label>
          <label className="flex items-center gap-2 self-end"><input type="checkbox" aria-label="new company password-protected slips" checked={form.protectSlips} onChange={(e) => setForm({ ...form, protectSlips: e.target.checked })} /><L {...M.protect} /></label>
          <div className="sm:col-span-2"><Button type="submit" disabled={create.isPending}><L {...M.submit} /></Button></div>
        </form>
        {create.error && !Object.keys(fieldErrors).length && <p role="alert" className="mt-2 text-sm text-red-700">{create.error.message}</p>}
        {create.data && (
          <p role="status" data-testid="company-created" className="mt-3 rounded border border-emerald-300 bg-emerald-50 p-2 text-sm">
            <L en={`${M.created.en}: ${create.data.name}.`} bn={`${create.data.name} ${M.created.bn}।`} /> <L {...M.nextStep} /> <Link className="text-indigo-700 underline" href="/admin/users"><L {...M.users} /></Link>
          </p>
        )}
      </Card>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <table className="min-w-full text-sm">
          <thead className="bg-slate-50 text-left text-slate-700"><tr>
            <th className="p-2"><L {...M.name} /></th><th className="p-2"><L {...M.timeZone} /></th><th className="p-2"><L {...M.schedule} /></th>
            <th className="p-2 text-right"><L {...M.employees} /></th><th className="p-2 text-right"><L {...M.hr} /></th><th className="p-2"><L {...M.protect} /></th><th className="p-2"><L {...M.since} /></th>
          </tr></thead>
          <tbody>
            {companies.data?.map((c) => (
              <tr key={c.id} data-testid="company-row" data-name={c.name} className="border-t border-slate-100">
                <td className="p-2 font-medium">{c.name}</td><td className="p-2">{c.timeZone}</td><td className="p-2 font-mono">{c.payrollSchedule} · {c.deadline}</td>
                <td className="p-2 text-right">{c.employees.toLocaleString('en-US')}</td><td className="p-2 text-right">{c.hrUsers}</td>
                <td className="p-2"><label className="flex items-center gap-2"><input type="checkbox" aria-label={`password-protected slips for ${c.name}`} checked={c.protectSlips} disabled={protect.isPending}
                  onChange={(e) => protect.mutate({ companyId: c.id, protectSlips: e.target.checked })} /><L {...(c.protectSlips ? M.on : M.off)} /></label></td>
                <td className="p-2 whitespace-nowrap">{fmtTime(c.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

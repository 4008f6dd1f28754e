'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import { useState } from 'react';
import { Button, Card, L, fmtTime } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

/**
 * Users: who can sign in, and a new HR manager or admin. A new user gets a one-time password,
 * shown here once, to hand over; they must change it at their first sign-in.
 */
export default function UsersPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const users = useQuery(trpc.admin.users.queryOptions());
  const [form, setForm] = useState<{ email: string; name: string; role: 'HR' | 'ADMIN'; companyId: string }>({ email: '', name: '', role: 'HR', companyId: '' });
  const create = useMutation(trpc.admin.createUser.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.admin.users.queryKey() }) }));
  const fieldErrors = create.error instanceof TRPCClientError ? ((create.error.data as { fieldErrors?: Record<string, string> } | undefined)?.fieldErrors ?? {}) : {};
  const input = 'mt-1 block w-full rounded border border-slate-300 px-2 py-1';
  const submit = () => create.mutate({ email: form.email, name: form.name, role: form.role, ...(form.role === 'HR' && form.companyId ? { companyId: form.companyId } : {}) });
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Users" bn="ব্যবহারকারী" /></h1>
      <Card>
        <h2 className="mb-3 font-semibold"><L en="New user" bn="নতুন ব্যবহারকারী" /></h2>
        <form className="grid gap-3 text-sm sm:grid-cols-2" onSubmit={(e) => { e.preventDefault(); submit(); }}>
          <label><L en="Email" bn="ইমেইল" /><input aria-label="new user email" type="email" required className={input} value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />
            {fieldErrors.email && <span className="text-red-700">{fieldErrors.email}</span>}</label>
          <label><L en="Name" bn="নাম" /><input aria-label="new user name" required className={input} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
            {fieldErrors.name && <span className="text-red-700">{fieldErrors.name}</span>}</label>
          <label><L en="Role" bn="ভূমিকা" />
            <select aria-label="new user role" className={input} value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as 'HR' | 'ADMIN' })}>
              <option value="HR">HR manager · এইচআর</option><option value="ADMIN">Admin · অ্যাডমিন</option>
            </select></label>
          {form.role === 'HR' && (
            <label><L en="Company" bn="কোম্পানি" />
              <select aria-label="new user company" required className={input} value={form.companyId} onChange={(e) => setForm({ ...form, companyId: e.target.value })}>
                <option value="">—</option>{users.data?.companies.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
              </select>
              {fieldErrors.companyId && <span className="text-red-700">{fieldErrors.companyId}</span>}</label>
          )}
          <div className="sm:col-span-2"><Button type="submit" disabled={create.isPending}><L en="Create user" bn="তৈরি করুন" /></Button></div>
        </form>
        {create.error && !Object.keys(fieldErrors).length && <p role="alert" className="mt-2 text-sm text-red-700">{create.error.message}</p>}
        {create.data && (
          <div role="status" className="mt-3 rounded border border-emerald-300 bg-emerald-50 p-3 text-sm">
            <L en={`Created ${create.data.email}. One-time password (shown only now; it must be changed at the first sign-in):`} bn="এককালীন পাসওয়ার্ড (শুধু এখন দেখানো হলো):" />
            <div data-testid="one-time-password" className="mt-1 font-mono text-base">{create.data.oneTimePassword}</div>
          </div>
        )}
      </Card>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <table className="min-w-full text-sm">
          <thead className="bg-slate-50 text-left text-slate-600"><tr>
            <th className="p-2"><L en="Email" bn="ইমেইল" /></th><th className="p-2"><L en="Role" bn="ভূমিকা" /></th><th className="p-2"><L en="Company" bn="কোম্পানি" /></th>
            <th className="p-2"><L en="Sessions" bn="সেশন" /></th><th className="p-2"><L en="Created" bn="তৈরি" /></th></tr></thead>
          <tbody>
            {users.data?.users.map((u) => (
              <tr key={u.id} data-testid="user-row" className="border-t border-slate-100">
                <td className="p-2">{u.email}{u.mustChangePassword && <span className="ml-2 rounded bg-amber-100 px-1 text-xs text-amber-800">one-time password</span>}</td>
                <td className="p-2">{u.role}</td><td className="p-2">{u.companyName ?? '—'}</td><td className="p-2">{u.activeSessions}</td><td className="p-2 whitespace-nowrap">{fmtTime(u.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

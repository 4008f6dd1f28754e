'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useState } from 'react';
import { Button, Card, Field, INPUT } from '../../../components/ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { errorData, useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';

/**
 * Users: who can sign in, and a new HR manager or admin. A new user gets a one-time password,
 * shown here once, to hand over; they must change it at their first sign-in.
 */
export default function UsersPage() {
  const t = useTranslations('users');
  const { when, num } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const users = useQuery(trpc.admin.users.queryOptions());
  const [form, setForm] = useState<{ email: string; name: string; role: 'HR' | 'ADMIN'; companyId: string }>({
    email: '',
    name: '',
    role: 'HR',
    companyId: '',
  });
  const create = useMutation(trpc.admin.createUser.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.admin.users.queryKey() }) }));
  const fieldErrors: Record<string, string | string[] | undefined> = errorData(create.error)?.fieldErrors ?? {};
  const fe = (k: string) => {
    const v = fieldErrors[k];
    return Array.isArray(v) ? v[0] : v;
  };
  const edit = (patch: Partial<typeof form>) => {
    setForm({ ...form, ...patch });
    if (create.error) create.reset();
  };
  const submit = () =>
    create.mutate({ email: form.email, name: form.name, role: form.role, ...(form.role === 'HR' && form.companyId ? { companyId: form.companyId } : {}) });
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      <Card>
        <h2 className="mb-3 font-semibold">{t('new')}</h2>
        <form
          className="grid gap-3 text-sm sm:grid-cols-2"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <Field id="new-user-email" label={t('email')} error={fe('email')}>
            <input
              id="new-user-email"
              type="email"
              required
              className={INPUT}
              value={form.email}
              onChange={(e) => edit({ email: e.target.value })}
              aria-invalid={!!fe('email')}
            />
          </Field>
          <Field id="new-user-name" label={t('name')} error={fe('name')}>
            <input
              id="new-user-name"
              required
              className={INPUT}
              value={form.name}
              onChange={(e) => edit({ name: e.target.value })}
              aria-invalid={!!fe('name')}
            />
          </Field>
          <Field id="new-user-role" label={t('role')}>
            <select id="new-user-role" className={INPUT} value={form.role} onChange={(e) => edit({ role: e.target.value as 'HR' | 'ADMIN' })}>
              <option value="HR">{t('roleHR')}</option>
              <option value="ADMIN">{t('roleADMIN')}</option>
            </select>
          </Field>
          {form.role === 'HR' && (
            <Field id="new-user-company" label={t('company')} error={fe('companyId')}>
              <select id="new-user-company" required className={INPUT} value={form.companyId} onChange={(e) => edit({ companyId: e.target.value })}>
                <option value="">{t('chooseCompany')}</option>
                {users.data?.companies.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <div className="sm:col-span-2">
            <Button type="submit" disabled={create.isPending}>
              {t('create')}
            </Button>
          </div>
        </form>
        <div aria-live="polite">
          {create.error && !Object.keys(fieldErrors).length && (
            <p role="alert" className="mt-2 text-sm text-red-800">
              {errorText(create.error)}
            </p>
          )}
          {create.data && (
            <div role="status" className="mt-3 rounded border border-emerald-300 bg-emerald-50 p-3 text-sm">
              {t('created', { email: create.data.email })}
              <div data-testid="one-time-password" className="mt-1 font-mono text-base">
                {create.data.oneTimePassword}
              </div>
            </div>
          )}
        </div>
      </Card>
      <Table caption={t('tableCaption')} className={STACK_ON_PHONE}>
        <THead>
          <tr>
            <Th>{t('email')}</Th>
            <Th>{t('role')}</Th>
            <Th>{t('company')}</Th>
            <Th>{t('sessions')}</Th>
            <Th>{t('createdAt')}</Th>
          </tr>
        </THead>
        <tbody>
          {users.data?.users.map((u) => (
            <tr key={u.id} data-testid="user-row" className="border-t border-slate-100">
              <Td data-label={t('email')} className="break-all">
                {u.email}
                {u.mustChangePassword && <span className="ml-2 rounded bg-amber-100 px-1 text-xs text-amber-900">{t('oneTime')}</span>}
              </Td>
              <Td data-label={t('role')}>{t(u.role === 'ADMIN' ? 'roleADMIN' : 'roleHR')}</Td>
              <Td data-label={t('company')}>{u.companyName ?? '—'}</Td>
              <Td data-label={t('sessions')}>{num(u.activeSessions)}</Td>
              <Td data-label={t('createdAt')}>{when(u.createdAt)}</Td>
            </tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}

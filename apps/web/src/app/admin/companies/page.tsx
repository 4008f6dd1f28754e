'use client';
import { COMPANY_DEFAULTS } from '@beton/db/company-defaults';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useLocale, useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { Button, Card, Field, INPUT } from '../../../components/ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { toast } from '../../../components/ui/toast.tsx';
import { describeCronBn, describeCronEn } from '../../../lib/cron.ts';
import { errorData, useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';

type Field = 'name' | 'timeZone' | 'payrollSchedule' | 'deadline' | 'replyToEmail';

/** The administrator's companies: create one, turn password-protected slips on or off. Strings: messages `companies`. */
export default function CompaniesPage() {
  const t = useTranslations('companies');
  const locale = useLocale();
  const describe = locale === 'bn' ? describeCronBn : describeCronEn;
  const { num, when } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const companies = useQuery(trpc.admin.companies.queryOptions());
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.companies.queryKey() });
  const [form, setForm] = useState({
    name: '',
    ...COMPANY_DEFAULTS,
    replyToEmail: '',
    protectSlips: false,
  });
  const create = useMutation(
    trpc.admin.createCompany.mutationOptions({
      onSuccess: () => {
        void refresh();
        setForm((f) => ({ ...f, name: '', replyToEmail: '' }));
      },
    }),
  );
  const protect = useMutation(
    trpc.admin.setProtectSlips.mutationOptions({
      onSuccess: (r, input) => {
        const name = companies.data?.find((c) => c.id === input.companyId)?.name ?? '';
        toast({
          title: t(r.protectSlips ? 'protectedOn' : 'protectedOff', { name }),
          description: r.protectSlips && r.withoutSlipPassword ? t('withoutSlipPassword', { count: r.withoutSlipPassword }) : undefined,
          variant: 'success',
        });
        return refresh();
      },
    }),
  );
  const fieldErrors = errorData(create.error)?.fieldErrors ?? {};
  // The server's reasons are English sentences; the page says the same in its own language, per field.
  const err = (k: Field) => (fieldErrors[k] ? t(`invalid_${k}`) : null);
  const input = (k: Field, props: React.InputHTMLAttributes<HTMLInputElement> = {}) => (
    <input
      id={`company-${k}`}
      {...props}
      className={`${INPUT} ${props.className ?? ''} ${err(k) ? 'border-red-600' : ''}`}
      value={form[k]}
      aria-invalid={!!err(k)}
      aria-describedby={[k === 'payrollSchedule' ? `company-${k}-hint` : '', err(k) ? `company-${k}-error` : ''].filter(Boolean).join(' ') || undefined}
      onChange={(e) => {
        setForm({ ...form, [k]: e.target.value });
      }}
    />
  );
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      <Card>
        <h2 className="mb-3 font-semibold">{t('create')}</h2>
        <form
          noValidate
          className="grid gap-3 text-sm sm:grid-cols-2"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({ ...form, replyToEmail: form.replyToEmail || undefined });
          }}
        >
          <Field id="company-name" label={t('name')} error={err('name')}>
            {input('name', { required: true, autoComplete: 'organization' })}
          </Field>
          <Field id="company-timeZone" label={t('timeZone')} error={err('timeZone')}>
            {input('timeZone', { required: true })}
          </Field>
          <Field id="company-payrollSchedule" label={t('schedule')} hint={describe(form.payrollSchedule)} error={err('payrollSchedule')}>
            {input('payrollSchedule', { required: true, className: 'font-mono' })}
          </Field>
          <Field id="company-deadline" label={t('deadline')} error={err('deadline')}>
            {input('deadline', { required: true, inputMode: 'numeric' })}
          </Field>
          <Field id="company-replyToEmail" label={t('replyTo')} error={err('replyToEmail')}>
            {input('replyToEmail', { type: 'email', autoComplete: 'email' })}
          </Field>
          <div className="flex items-center gap-2 self-end">
            <input
              id="company-protect"
              type="checkbox"
              className="h-4 w-4"
              checked={form.protectSlips}
              onChange={(e) => setForm({ ...form, protectSlips: e.target.checked })}
            />
            <label htmlFor="company-protect">{t('protect')}</label>
          </div>
          <div className="sm:col-span-2">
            <Button type="submit" disabled={create.isPending}>
              {t('submit')}
            </Button>
          </div>
        </form>
        {create.error && !Object.keys(fieldErrors).length && (
          <p role="alert" className="mt-2 text-sm text-red-800">
            {errorText(create.error)}
          </p>
        )}
        <div aria-live="polite">
          {create.data && (
            <p data-testid="company-created" className="mt-3 rounded border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-950">
              {t('created', { name: create.data.name })}{' '}
              {t.rich('nextStep', {
                link: (chunks) => (
                  <Link className="text-indigo-800 underline" href="/admin/users">
                    {chunks}
                  </Link>
                ),
              })}
            </p>
          )}
        </div>
      </Card>
      {companies.error && (
        <p role="alert" className="text-red-800">
          {errorText(companies.error)}
        </p>
      )}
      {protect.error && (
        <p role="alert" className="text-red-800">
          {errorText(protect.error)}
        </p>
      )}
      <Table caption={t('caption')} className={STACK_ON_PHONE} data-testid="companies">
        <THead>
          <tr>
            <Th>{t('name')}</Th>
            <Th>{t('timeZone')}</Th>
            <Th>{t('scheduleShort')}</Th>
            <Th className="text-right">{t('employees')}</Th>
            <Th className="text-right">{t('hr')}</Th>
            <Th>{t('protect')}</Th>
            <Th>{t('since')}</Th>
          </tr>
        </THead>
        <tbody>
          {companies.data?.map((c) => (
            <tr key={c.id} data-testid="company-row" data-name={c.name} className="border-t border-slate-100">
              <Td data-label={t('name')} className="font-medium">
                {c.name}
              </Td>
              <Td data-label={t('timeZone')}>{c.timeZone}</Td>
              <Td data-label={t('scheduleShort')}>
                {t('scheduleAt', { schedule: describe(c.payrollSchedule), deadline: c.deadline })}
                <div className="font-mono text-xs text-slate-700">{c.payrollSchedule}</div>
              </Td>
              <Td data-label={t('employees')} className="sm:text-right">
                {num(c.employees)}
              </Td>
              <Td data-label={t('hr')} className="sm:text-right">
                {num(c.hrUsers)}
              </Td>
              <Td data-label={t('protect')}>
                <div className="flex items-center gap-2">
                  <input
                    id={`protect-${c.id}`}
                    type="checkbox"
                    className="h-4 w-4"
                    aria-label={t('protectFor', { name: c.name })}
                    checked={c.protectSlips}
                    disabled={protect.isPending}
                    onChange={(e) => protect.mutate({ companyId: c.id, protectSlips: e.target.checked })}
                  />
                  <span data-testid="protect-state" aria-hidden="true">
                    {c.protectSlips ? t('on') : t('off')}
                  </span>
                </div>
              </Td>
              <Td data-label={t('since')}>{when(c.createdAt)}</Td>
            </tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}

'use client';
import { isCalendarMonth } from '@beton/db/month';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useSearchParams } from 'next/navigation';
import { Suspense, useEffect, useState } from 'react';
import { Card, Field, INPUT, Pager, StatusBadge } from '../../../components/ui.tsx';
import { usePlainReason } from '../../../components/delivery.tsx';
import { useStatusText } from '../../../components/ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { thisMonth } from '../../../lib/month.ts';
import { useTRPC } from '../../../lib/trpc.tsx';

const STATUSES = ['', 'none', 'queued', 'running', 'retrying', 'rendered', 'sent', 'failed'] as const;
const PAGE = 25;

/** `?month=2026-11&status=failed` opens the list filtered (the run card's "32 need attention" links here). */
export default function EmployeesPage() {
  return (
    <Suspense>
      <Employees />
    </Suspense>
  );
}

function Employees() {
  const t = useTranslations('employees');
  const te = useTranslations('errors');
  const statusText = useStatusText();
  const reason = usePlainReason();
  const errorText = useErrorText();
  const { month: monthName } = useFmt();
  const trpc = useTRPC();
  const params = useSearchParams();
  const runs = useQuery(trpc.runs.list.queryOptions());
  // A bad month or status in the address is said in words, and the list shows without it.
  const monthParam = params.get('month');
  const statusParam = params.get('status');
  const badMonth = monthParam !== null && !isCalendarMonth(monthParam) ? monthParam : null;
  const badStatus = statusParam !== null && !(STATUSES as readonly string[]).includes(statusParam) ? statusParam : null;
  const [month, setMonth] = useState<string | null>(() => (monthParam && isCalendarMonth(monthParam) ? monthParam : null));
  const [search, setSearch] = useState('');
  const [debounced, setDebounced] = useState('');
  const [status, setStatus] = useState<(typeof STATUSES)[number]>(() =>
    (STATUSES as readonly string[]).includes(statusParam ?? '') ? (statusParam as (typeof STATUSES)[number]) : '',
  );
  const [offset, setOffset] = useState(0);
  useEffect(() => {
    const tm = setTimeout(() => {
      setDebounced(search);
      setOffset(0);
    }, 250);
    return () => clearTimeout(tm);
  }, [search]);
  const effectiveMonth = month ?? runs.data?.[0]?.month ?? (runs.isLoading ? null : thisMonth());
  const list = useQuery({
    ...trpc.employees.list.queryOptions({
      month: effectiveMonth ?? thisMonth(),
      search: debounced || undefined,
      status: status || undefined,
      limit: PAGE,
      offset,
    }),
    enabled: effectiveMonth !== null,
    placeholderData: keepPreviousData,
  });
  const total = list.data?.total ?? 0;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">{t('title')}</h1>
        <Link
          href="/employees/new"
          data-testid="add-employee"
          className="ml-auto rounded bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700"
        >
          {t('add')}
        </Link>
        <Link
          href="/employees/import"
          data-testid="import-employees"
          className="rounded border border-slate-400 bg-white px-3 py-1.5 text-sm font-medium text-slate-900 hover:bg-slate-50"
        >
          {t('import')}
        </Link>
      </div>
      {(badMonth !== null || badStatus !== null) && (
        <p role="alert" data-testid="bad-filter" className="rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900">
          {badMonth !== null && te('badMonth', { value: badMonth })} {badStatus !== null && te('badStatus', { value: badStatus })}
        </p>
      )}
      <Card className="flex flex-wrap items-end gap-3">
        <Field id="employee-search" label={t('search')} className="w-full sm:w-56">
          <input
            id="employee-search"
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder={t('searchHint')}
            className={INPUT}
          />
        </Field>
        <Field id="employee-status" label={t('slipStatus')}>
          <select
            id="employee-status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as typeof status);
              setOffset(0);
            }}
            className={INPUT}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s ? statusText(s) : t('allStatuses')}
              </option>
            ))}
          </select>
        </Field>
        <Field id="employee-month" label={t('month')}>
          <input
            id="employee-month"
            type="month"
            value={effectiveMonth ?? ''}
            onChange={(e) => {
              if (isCalendarMonth(e.target.value)) {
                setMonth(e.target.value);
                setOffset(0);
              }
            }}
            className={INPUT}
          />
        </Field>
        <span className="ml-auto text-sm text-slate-700" aria-live="polite">
          <span data-testid="employee-total" data-count={total}>
            {t('total', { count: total })}
          </span>
        </span>
      </Card>
      {list.error && (
        <p role="alert" className="text-red-700">
          {errorText(list.error)}
        </p>
      )}
      <Table caption={t('tableCaption', { month: effectiveMonth ? monthName(effectiveMonth) : '' })} className={STACK_ON_PHONE}>
        <THead>
          <tr>
            <Th>{t('code')}</Th>
            <Th>{t('name')}</Th>
            <Th>{t('email')}</Th>
            <Th>{t('slip')}</Th>
          </tr>
        </THead>
        <tbody>
          {list.data?.rows.map((e) => (
            <tr key={e.id} className="border-t border-slate-100 hover:bg-slate-50">
              <Td data-label={t('code')} className="font-mono">
                <Link className="text-indigo-700 underline" href={`/employees/${e.id}`}>
                  {e.code}
                </Link>
              </Td>
              <Td data-label={t('name')}>
                {e.nameLatin}
                {e.deactivatedAt && (
                  <span data-testid="left" className="ml-2 rounded bg-slate-200 px-1.5 text-xs text-slate-800">
                    {t('left')}
                  </span>
                )}
                <div lang="bn" className="text-xs text-slate-700">
                  {e.nameBengali}
                </div>
              </Td>
              <Td data-label={t('email')} className="break-all">
                {e.email}
              </Td>
              <Td data-label={t('slip')}>
                <StatusBadge status={e.slipStatus} />
                {e.lastErrorCode && (
                  <div data-testid="slip-reason" className="mt-1 text-xs text-red-800">
                    {reason(e.lastErrorCode)}
                  </div>
                )}
              </Td>
            </tr>
          ))}
        </tbody>
      </Table>
      <Pager offset={offset} pageSize={PAGE} total={total} onOffset={setOffset} />
    </div>
  );
}

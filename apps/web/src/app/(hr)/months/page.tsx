'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { SlipGlossary } from '../../../components/slip-state.tsx';
import { Card, StatusBadge } from '../../../components/ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';

/** Every payroll month of the company, newest first. Strings: messages `months`. */
export default function MonthsPage() {
  const t = useTranslations('months');
  const tc = useTranslations('common');
  const { num, month: monthName, when } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const months = useQuery(trpc.months.list.queryOptions());
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      <p className="text-sm text-slate-700">{t('intro')}</p>
      {months.isLoading && <p role="status">{tc('loading')}</p>}
      {months.error && (
        <p role="alert" className="text-red-800">
          {errorText(months.error)}
        </p>
      )}
      {months.data?.length === 0 && <Card>{t('empty')}</Card>}
      {/* Sent + failed + on its way + no job = employees, in the run card's words. */}
      {!!months.data?.length && <SlipGlossary words={['sent', 'failed', 'open', 'none']} />}
      {!!months.data?.length && (
        <Table caption={t('caption')} className={STACK_ON_PHONE} data-testid="months-table">
          <THead>
            <tr>
              <Th>{t('month')}</Th>
              <Th>{t('run')}</Th>
              <Th className="text-right">{t('employees')}</Th>
              <Th className="text-right">{t('slipsSent')}</Th>
              <Th className="text-right">{t('slipsFailed')}</Th>
              <Th className="text-right">{t('slipsOpen')}</Th>
              <Th className="text-right">{t('slipsNone')}</Th>
              <Th className="text-right">{t('credited')}</Th>
              <Th className="text-right">{t('atBank')}</Th>
              <Th>{t('started')}</Th>
            </tr>
          </THead>
          <tbody>
            {months.data.map((m) => (
              <tr key={m.runId} data-testid="month-row" data-month={m.month} className="border-t border-slate-100">
                <Td data-label={t('month')} className="font-medium">
                  <Link className="text-indigo-700 underline" href={`/months/${m.month}`}>
                    {monthName(m.month)}
                  </Link>
                </Td>
                <Td data-label={t('run')}>
                  <StatusBadge status={m.status} />
                </Td>
                <Td data-label={t('employees')} data-count={m.employeeCount} className="sm:text-right">
                  {num(m.employeeCount)}
                </Td>
                <Td data-label={t('slipsSent')} data-count={m.slipsSent} className="sm:text-right">
                  {num(m.slipsSent)}
                </Td>
                <Td data-label={t('slipsFailed')} data-count={m.slipsFailed} className={`sm:text-right ${m.slipsFailed ? 'font-semibold text-red-800' : ''}`}>
                  {num(m.slipsFailed)}
                </Td>
                <Td data-label={t('slipsOpen')} data-count={m.slips.queued + m.slips.running + m.slips.retrying} className="sm:text-right">
                  {num(m.slips.queued + m.slips.running + m.slips.retrying)}
                </Td>
                <Td data-label={t('slipsNone')} data-count={m.withoutJob} className="sm:text-right">
                  {num(m.withoutJob)}
                </Td>
                <Td data-label={t('credited')} className="sm:text-right">
                  {num(m.transfers.credited)}
                </Td>
                <Td data-label={t('atBank')} className="sm:text-right">
                  {num(m.transfers.submitted + m.transfers.pending)}
                </Td>
                <Td data-label={t('started')}>{when(m.startedAt)}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </div>
  );
}

'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useState } from 'react';
import { ExportBadge, TransferBadge } from '../../../../components/months.tsx';
import { SlipGlossary, SlipStateBadge } from '../../../../components/slip-state.tsx';
import { Button, Card, Field, INPUT, Pager } from '../../../../components/ui.tsx';
import { useActorName } from '../../../../components/words.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../../components/ui/table.tsx';
import { useErrorText } from '../../../../lib/errors.ts';
import { useFmt } from '../../../../lib/format.ts';
import { useTRPC } from '../../../../lib/trpc.tsx';

const KINDS = ['slips-zip', 'register-csv', 'register-xlsx'] as const;
const PAGE = 25;

/** One past month: its summary, its downloads (prepared in the background), its employees. Strings: messages `month`. */
export default function MonthPage() {
  const { month } = useParams<{ month: string }>();
  const t = useTranslations('month');
  const tc = useTranslations('common');
  const { num, money, when, month: monthName } = useFmt();
  const errorText = useErrorText();
  const actorName = useActorName();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const detail = useQuery(trpc.months.get.queryOptions({ month, search: search || undefined, limit: PAGE, offset }));
  const exports = useQuery({
    ...trpc.months.exports.queryOptions({ month }),
    refetchInterval: (q) => (q.state.data?.some((e) => e.status === 'queued' || e.status === 'building') ? 1_000 : false),
  });
  const request = useMutation(
    trpc.months.requestExport.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.months.exports.queryKey({ month }) }) }),
  );
  const s = detail.data?.summary;
  const kindName = (kind: (typeof KINDS)[number]) => t(`kind_${kind}`);
  const summary = s
    ? ([
        ['employees', s.employeeCount],
        ['slipsSent', s.slipsSent],
        ['slipsFailed', s.slipsFailed],
        ['slipsOpen', s.slips.queued + s.slips.running + s.slips.retrying],
        ['slipsNone', s.withoutJob],
        ['credited', s.transfers.credited],
        ['atBank', s.transfers.submitted],
        ['pending', s.transfers.pending],
      ] as const)
    : [];
  return (
    <div className="space-y-4">
      <Link href="/months" className="text-sm text-indigo-700 underline">
        ← {t('back')}
      </Link>
      <h1 className="text-2xl font-semibold" data-testid="month-title">
        {monthName(month)}
      </h1>
      {detail.isLoading && <p role="status">{tc('loading')}</p>}
      {detail.error && (
        <p role="alert" className="text-red-800">
          {errorText(detail.error)}
        </p>
      )}
      {s && (
        <Card>
          <dl className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-4 lg:grid-cols-8" data-testid="month-summary">
            {summary.map(([key, value]) => (
              <div key={key}>
                <dt className="text-slate-700">{t(key)}</dt>
                <dd className="text-lg font-semibold" data-testid={key} data-count={value}>
                  {num(value)}
                </dd>
              </div>
            ))}
          </dl>
          <div className="mt-3">
            <SlipGlossary words={['sent', 'failed', 'open', 'none', 'rendered']} />
          </div>
        </Card>
      )}

      <Card>
        <h2 className="font-semibold">{t('exports')}</h2>
        <p className="mb-3 text-sm text-slate-700">{t('exportsIntro')}</p>
        <div className="flex flex-wrap gap-2">
          {KINDS.map((kind) => (
            <Button key={kind} variant="secondary" data-kind={kind} disabled={request.isPending} onClick={() => request.mutate({ month, kind })}>
              {t('prepare', { kind: kindName(kind) })}
            </Button>
          ))}
        </div>
        {request.error && (
          <p role="alert" className="mt-2 text-sm text-red-800">
            {errorText(request.error)}
          </p>
        )}
        <ul className="mt-3 space-y-2" data-testid="exports" aria-live="polite">
          {exports.data?.length === 0 && <li className="text-sm text-slate-700">{t('noExports')}</li>}
          {exports.data?.map((e) => {
            const pct = e.total ? Math.round((e.done / e.total) * 100) : e.status === 'ready' ? 100 : 0;
            const status = e.status === 'ready' && e.expired ? 'expired' : e.status;
            return (
              <li key={e.id} data-testid="export" data-kind={e.kind} data-status={status} className="rounded border border-slate-200 p-2 text-sm">
                <div className="flex flex-wrap items-center gap-2">
                  <span className="font-medium">
                    {kindName(e.kind)}
                    {e.volumes > 1 && <> · {t('part', { i: num(e.volume), n: num(e.volumes) })}</>}
                  </span>
                  <ExportBadge status={status} />
                  <span className="text-slate-700">{t('requested', { when: when(e.createdAt), who: actorName(e.requester) })}</span>
                  {status === 'ready' && (
                    <a
                      className="rounded bg-indigo-600 px-3 py-1 font-medium break-all text-white hover:bg-indigo-700 sm:ml-auto"
                      href={`/api/exports/${e.id}`}
                      download={e.filename}
                      data-testid="export-download"
                    >
                      {t('download', { file: e.filename })}
                    </a>
                  )}
                </div>
                {(e.status === 'queued' || e.status === 'building') && (
                  <div className="mt-2 flex items-center gap-2">
                    <div
                      className="h-2 flex-1 overflow-hidden rounded bg-slate-200"
                      role="progressbar"
                      aria-label={t('progressLabel', { kind: kindName(e.kind) })}
                      aria-valuenow={pct}
                      aria-valuemin={0}
                      aria-valuemax={100}
                    >
                      <div className="h-2 bg-indigo-600" style={{ width: `${pct}%` }} />
                    </div>
                    <span data-testid="export-progress" data-done={e.done} data-total={e.total}>
                      {t('progress', { done: num(e.done), total: num(e.total) })}
                    </span>
                  </div>
                )}
                {status === 'ready' && e.expiresAt && <p className="mt-1 text-slate-700">{t('expires', { when: when(e.expiresAt) })}</p>}
                {status === 'expired' && <p className="mt-1 text-slate-700">{t('expiredHelp')}</p>}
                {e.status === 'failed' && (
                  <p role="alert" data-testid="export-error" className="mt-1 text-red-800">
                    {t('exportFailed')}
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      </Card>

      <Card>
        <div className="mb-3 flex flex-wrap items-end gap-3">
          <Field id="month-search" label={t('search')} className="w-full sm:w-72">
            <input
              id="month-search"
              type="search"
              className={INPUT}
              value={search}
              onChange={(e) => {
                setSearch(e.target.value);
                setOffset(0);
              }}
            />
          </Field>
          {detail.data && (
            <span data-testid="month-employee-total" data-count={detail.data.total} className="text-sm text-slate-700">
              {t('total', { count: detail.data.total })}
            </span>
          )}
        </div>
        <Table caption={t('caption', { month: monthName(month) })} className={STACK_ON_PHONE} data-testid="month-employees">
          <THead>
            <tr>
              <Th>{t('code')}</Th>
              <Th>{t('name')}</Th>
              <Th className="text-right">{t('net')}</Th>
              <Th>{t('slip')}</Th>
              <Th>{t('transfer')}</Th>
            </tr>
          </THead>
          <tbody>
            {detail.data?.employees.map((e) => (
              <tr key={e.id} data-testid="month-employee" data-code={e.code} className="border-t border-slate-100">
                <Td data-label={t('code')} className="font-mono">
                  {e.code}
                </Td>
                <Td data-label={t('name')}>
                  <Link className="text-indigo-700 underline" href={`/employees/${e.id}`}>
                    {e.nameLatin}
                  </Link>{' '}
                  <span lang="bn" className="text-slate-700">
                    {e.nameBengali}
                  </span>
                </Td>
                <Td data-label={t('net')} className="whitespace-nowrap sm:text-right" data-net={e.net}>
                  {money(e.net)}
                </Td>
                <Td data-label={t('slip')} className="whitespace-nowrap">
                  <SlipStateBadge state={e.slipStatus} />
                  {e.slipId !== null && (
                    <>
                      {' '}
                      <a
                        className="text-indigo-700 underline"
                        href={`/api/slips/${e.slipId}/pdf`}
                        target="_blank"
                        rel="noreferrer"
                        aria-label={t('pdfOf', { name: e.nameLatin })}
                      >
                        {t('pdf')}
                      </a>
                    </>
                  )}
                </Td>
                <Td data-label={t('transfer')} className="whitespace-nowrap">
                  <TransferBadge status={e.transferStatus} />
                  {e.creditedAt && <span className="ml-1 text-slate-700">{when(e.creditedAt)}</span>}
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
        {detail.data && (
          <div className="mt-3">
            <Pager offset={offset} pageSize={PAGE} total={detail.data.total} onOffset={setOffset} />
          </div>
        )}
      </Card>
    </div>
  );
}

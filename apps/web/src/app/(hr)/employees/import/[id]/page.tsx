'use client';
import { reasonText } from '@beton/people/reasons';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useLocale, useTranslations } from 'next-intl';
import Link from 'next/link';
import { use } from 'react';
import { Button, Card } from '../../../../../components/ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../../../components/ui/table.tsx';
import { errorData, useErrorText } from '../../../../../lib/errors.ts';
import { useFmt } from '../../../../../lib/format.ts';
import { useTRPC } from '../../../../../lib/trpc.tsx';
import { ImportStatus } from '../status.tsx';

/** One import: its dry run's progress and counts, the first rows, the errors, then Apply. Strings: messages `importDetail`. */
export default function ImportDetailPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  const t = useTranslations('importDetail');
  const tc = useTranslations('common');
  const locale = useLocale();
  const { when, num, month: monthName } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const view = useQuery({
    ...trpc.imports.get.queryOptions({ id }),
    // Polled while the job works; stops once it waits for HR or has ended.
    refetchInterval: (q) => (q.state.data && ['validated', 'applied', 'failed'].includes(q.state.data.status) ? false : 1_000),
  });
  const apply = useMutation(trpc.imports.apply.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.imports.get.queryKey({ id }) }) }));
  if (view.error)
    return (
      <Card>
        <p role="alert" className="text-red-800">
          {errorData(view.error)?.code === 'NOT_FOUND' ? t('notFound') : errorText(view.error)}
        </p>
      </Card>
    );
  const v = view.data;
  if (!v) return <p role="status">{tc('loading')}</p>;
  const working = v.status === 'uploaded' || v.status === 'validating' || v.status === 'applying';
  const total = v.status === 'applying' || v.status === 'applied' ? v.rowsTotal : null;
  const pct = total ? Math.min(100, Math.round((100 * v.phaseRows) / Math.max(1, total))) : null;
  const toApply = v.counts.new + v.counts.changed;
  return (
    <div className="space-y-4">
      <Link href="/employees/import" className="text-sm text-indigo-700 underline">
        ← {t('back')}
      </Link>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="break-all text-2xl font-semibold">
          {t.rich('title', { file: v.filename, name: (chunks) => <span data-testid="import-file">{chunks}</span> })}
        </h1>
        <ImportStatus status={v.status} />
      </div>
      <p className="text-sm text-slate-700">
        {t('meta', { month: monthName(v.effectiveMonth), when: when(v.createdAt), who: v.createdBy.replace(/^hr:/, '') })}
      </p>

      {working && (
        <Card>
          <p id="import-progress-label" className="mb-2 text-sm">
            {v.status === 'applying' ? t('progressApplying') : t('progressChecking')}:{' '}
            <span data-testid="import-progress" data-done={v.phaseRows}>
              {total ? t('progress', { done: num(v.phaseRows), total: num(total) }) : t('progressUnknown', { done: num(v.phaseRows) })}
            </span>
          </p>
          <div
            role="progressbar"
            aria-labelledby="import-progress-label"
            aria-valuemin={0}
            aria-valuemax={100}
            {...(pct === null ? {} : { 'aria-valuenow': pct })}
            className="h-3 w-full overflow-hidden rounded bg-slate-200"
          >
            <div className={`h-full bg-indigo-600 ${pct === null ? 'w-1/3 animate-pulse' : ''}`} style={pct === null ? undefined : { width: `${pct}%` }} />
          </div>
          {v.stalled && (
            <div className="mt-3 space-y-2 text-sm">
              <p role="alert" className="text-amber-900">
                {t('stalled')}
              </p>
              <Button onClick={() => apply.mutate({ id })} disabled={apply.isPending}>
                {t('resume')}
              </Button>
            </div>
          )}
        </Card>
      )}

      {v.status === 'failed' && (
        <Card className="space-y-1">
          <p role="alert" data-testid="import-failure" className="text-red-800">
            {t('failure')}
          </p>
          {v.failureReason && (
            <p data-testid="import-failure-reason" className="text-sm text-red-800">
              {reasonText(v.failureReason)[locale === 'bn' ? 'bn' : 'en']}
            </p>
          )}
          {v.failure && (
            <p className="text-xs text-slate-700">
              {t('failureDetail')}{' '}
              <code lang="en" className="break-all">
                {v.failure}
              </code>
            </p>
          )}
        </Card>
      )}

      {(v.status === 'validated' || v.status === 'applying' || v.status === 'applied') && (
        <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4" data-testid="import-counts">
          {(['new', 'changed', 'unchanged', 'errors'] as const).map((k) => (
            <div key={k} className="rounded-lg border border-slate-200 bg-white p-4 text-center shadow-sm">
              <dt className="text-sm text-slate-700">{t(k)}</dt>
              <dd data-testid={`count-${k}`} data-count={v.counts[k]} className="text-2xl font-semibold">
                {num(v.counts[k])}
              </dd>
            </div>
          ))}
        </dl>
      )}

      {v.status === 'validated' && (
        <Card className="space-y-2">
          {toApply > 0 ? (
            <>
              <Button onClick={() => apply.mutate({ id })} disabled={apply.isPending} data-testid="apply">
                {t('apply', { count: num(toApply) })}
              </Button>
              <p className="text-xs text-slate-700">{t('applyNote')}</p>
            </>
          ) : (
            <p data-testid="nothing-to-apply" className="text-sm">
              {t('nothing')}
            </p>
          )}
          {apply.error && (
            <p role="alert" className="text-sm text-red-800">
              {errorText(apply.error)}
            </p>
          )}
        </Card>
      )}

      {v.status === 'applied' && (
        <Card>
          <p role="status" data-testid="import-applied" className="text-emerald-900">
            {t('applied', { added: num(v.applied.new), updated: num(v.applied.changed), when: when(v.appliedAt) })}
          </p>
        </Card>
      )}

      {v.preview.length > 0 && (
        <section className="space-y-2">
          <h2 className="text-lg font-semibold">{t('preview')}</h2>
          <Table caption={t('previewCaption')} className={STACK_ON_PHONE} data-testid="import-preview">
            <THead>
              <tr>
                <Th>{t('row')}</Th>
                <Th>{t('code')}</Th>
                <Th>{t('name')}</Th>
                <Th>{t('action')}</Th>
                <Th>{t('fields')}</Th>
              </tr>
            </THead>
            <tbody>
              {v.preview.map((p) => (
                <tr key={p.row} className="border-t border-slate-100">
                  <Td data-label={t('row')}>{num(p.row)}</Td>
                  <Td data-label={t('code')} className="font-mono">
                    {p.code}
                  </Td>
                  <Td data-label={t('name')}>{p.name}</Td>
                  <Td data-label={t('action')} data-action={p.action}>
                    {t(`act_${p.action}`)}
                  </Td>
                  <Td data-label={t('fields')} className="font-mono text-xs">
                    {p.fields.join(', ')}
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </section>
      )}

      {v.errors.length > 0 && (
        <section className="space-y-2">
          <div className="flex flex-wrap items-center gap-3">
            <h2 className="text-lg font-semibold">{t('errorReport')}</h2>
            <a className="text-sm text-indigo-700 underline" data-testid="error-report" href={`/api/imports/${id}/errors`} download>
              {t('download')}
            </a>
          </div>
          <p className="text-xs text-slate-700">{t('firstErrors')}</p>
          <Table caption={t('errorsCaption')} className={STACK_ON_PHONE} data-testid="import-errors">
            <THead>
              <tr>
                <Th>{t('row')}</Th>
                <Th>{t('column')}</Th>
                <Th>{t('reason')}</Th>
              </tr>
            </THead>
            <tbody>
              {v.errors.map((e) => (
                <tr key={`${e.row}:${e.column}`} className="border-t border-slate-100">
                  <Td data-label={t('row')}>{num(e.row)}</Td>
                  <Td data-label={t('column')} className="font-mono">
                    {e.column}
                  </Td>
                  <Td data-label={t('reason')}>{locale === 'bn' ? e.reasonBn : e.reasonEn}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </section>
      )}
    </div>
  );
}

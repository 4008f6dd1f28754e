'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { Button, Card, StatusBadge } from '../../../../components/ui.tsx';
import { confirmDialog } from '../../../../components/ui/dialog.tsx';
import { toast } from '../../../../components/ui/toast.tsx';
import { errorData, useErrorText } from '../../../../lib/errors.ts';
import { useFmt } from '../../../../lib/format.ts';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { useSupersededReason, useTaskName } from '../../../../components/words.tsx';

export function JobView({ id, backHref }: { id: number; backHref: string }) {
  const t = useTranslations('job');
  const tf = useTranslations('failed');
  const tc = useTranslations('common');
  const { when, num, ms } = useFmt();
  const errorText = useErrorText();
  const superseded = useSupersededReason();
  const taskName = useTaskName();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const job = useQuery(trpc.admin.job.queryOptions({ id }));
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.pathKey() });
  const retry = useMutation(
    trpc.admin.retry.mutationOptions({
      onSuccess: (r) => {
        toast({ title: tf('retried', { count: r.retried }), variant: 'success', testId: 'job-toast' });
        return refresh();
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const discard = useMutation(
    trpc.admin.discard.mutationOptions({
      onSuccess: (r) => {
        toast({ title: tf('discarded', { count: r.discarded }), variant: 'success', testId: 'job-toast' });
        void refresh();
        router.push(backHref);
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const back = (
    <Link href={backHref} className="text-sm text-indigo-700 underline">
      ← {t('back')}
    </Link>
  );
  if (job.error) {
    return (
      <div className="space-y-4">
        {back}
        <Card>
          <div role="alert">
            <h1 className="text-xl font-semibold">{errorData(job.error)?.code === 'NOT_FOUND' ? t('notFound', { id: String(id) }) : errorText(job.error)}</h1>
          </div>
        </Card>
      </div>
    );
  }
  if (!job.data)
    return (
      <div className="space-y-4">
        {back}
        <p role="status">{tc('loading')}</p>
      </div>
    );
  const j = job.data;
  const canAct = j.status === 'failed' && !j.supersededBy;
  return (
    <div className="space-y-4">
      {back}
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">{t('title', { id: String(j.id) })}</h1>
        <span aria-live="polite">
          <StatusBadge status={j.status} />
        </span>
        {canAct && (
          <div className="ml-auto flex gap-2">
            <Button disabled={retry.isPending} onClick={() => retry.mutate({ ids: [j.id] })}>
              {tf('retry')}
            </Button>
            <Button
              variant="danger"
              disabled={discard.isPending}
              onClick={() => {
                void confirmDialog({
                  title: tf('confirmDiscardOne', { id: String(j.id) }),
                  description: tf('cannotUndo'),
                  confirmLabel: tf('discard'),
                  danger: true,
                }).then((ok) => {
                  if (ok) discard.mutate({ ids: [j.id] });
                });
              }}
            >
              {tf('discard')}
            </Button>
          </div>
        )}
      </div>
      <Card>
        <dl className="grid grid-cols-1 gap-x-6 gap-y-2 text-sm sm:grid-cols-[max-content_1fr]">
          <dt className="font-medium text-slate-700">{t('task')}</dt>
          <dd>
            {taskName(j.taskName)}{' '}
            <span className="font-mono text-xs text-slate-700" translate="no">
              ({j.taskName})
            </span>
          </dd>
          <dt className="font-medium text-slate-700">{t('queue')}</dt>
          <dd translate="no">{j.queue}</dd>
          <dt className="font-medium text-slate-700">{t('key')}</dt>
          <dd className="font-mono break-all" translate="no">
            {j.idempotencyKey}
          </dd>
          <dt className="font-medium text-slate-700">{t('attempts')}</dt>
          <dd>{t('attemptsOf', { n: num(j.attempts), max: num(j.maxAttempts) })}</dd>
          <dt className="font-medium text-slate-700">{t('runAt')}</dt>
          <dd>{when(j.runAt)}</dd>
          <dt className="font-medium text-slate-700">{t('finishedAt')}</dt>
          <dd>{when(j.finishedAt)}</dd>
          {j.traceId && (
            <>
              <dt className="font-medium text-slate-700">{t('trace')}</dt>
              <dd data-testid="job-trace" className="font-mono break-all" translate="no">
                {j.traceUrl ? (
                  <a href={j.traceUrl} target="_blank" rel="noreferrer" className="text-indigo-700 underline" title={t('openTrace')}>
                    {j.traceId}
                  </a>
                ) : (
                  j.traceId
                )}
              </dd>
            </>
          )}
          {j.lastError && !j.supersededBy && (
            <>
              <dt className="font-medium text-slate-700">{t('lastError')}</dt>
              <dd className="text-red-800 [overflow-wrap:anywhere]">
                <span className="font-mono" translate="no">
                  {j.lastErrorCode}
                </span>{' '}
                <span lang="en" translate="no">
                  {j.lastError}
                </span>
              </dd>
            </>
          )}
        </dl>
        {j.supersededBy && (
          <p data-testid="superseded-reason" className="mt-2 text-sm text-slate-800">
            {t('supersededText', { reason: superseded(j.supersededBy) })}{' '}
            <span className="font-mono text-xs text-slate-700" translate="no">
              {j.supersededBy.key}
            </span>
          </p>
        )}
      </Card>
      <Card>
        <h2 className="mb-2 font-semibold">{t('payload')}</h2>
        <pre tabIndex={0} aria-label={t('payload')} className="overflow-x-auto rounded bg-slate-50 p-2 text-xs">
          {JSON.stringify(j.payload, null, 2)}
        </pre>
      </Card>
      <Card>
        <h2 className="mb-2 font-semibold">{t('attemptLog')}</h2>
        <ol className="space-y-2 text-sm">
          {j.attemptLog.map((a, i) => (
            <li key={i} className="rounded border border-slate-200 p-2">
              <div className="flex flex-wrap items-center gap-2">
                <b>{t('attemptLine', { n: num(a.attempt) })}</b> <StatusBadge status={a.outcome} /> <span>{when(a.startedAt)}</span>
                <span>
                  · {t('duration')}: {a.durationMs === null ? '—' : ms(a.durationMs)}
                </span>{' '}
                <span className="break-all">
                  · {t('worker')}: <span translate="no">{a.workerId ?? '—'}</span>
                </span>
                {a.retryDelayMs !== null && <span>· {t('retryIn', { delay: ms(a.retryDelayMs) })}</span>}
              </div>
              {a.errorMessage && (
                <div className="mt-1 text-red-800 [overflow-wrap:anywhere]" translate="no">
                  <span className="font-mono">{a.errorCode}</span>: <span lang="en">{a.errorMessage}</span>
                </div>
              )}
              {a.errorStack && (
                <details className="mt-1">
                  <summary className="cursor-pointer text-xs text-slate-700">{t('stack')}</summary>
                  <pre tabIndex={0} className="mt-1 overflow-x-auto text-xs whitespace-pre-wrap text-slate-700">
                    {a.errorStack}
                  </pre>
                </details>
              )}
            </li>
          ))}
        </ol>
      </Card>
    </div>
  );
}

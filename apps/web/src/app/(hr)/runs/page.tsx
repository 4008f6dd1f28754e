'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { Button, Card, StatusLabel } from '../../../components/ui.tsx';
import { AddressesToFix, RunDeliveryCounts } from '../../../components/delivery.tsx';
import { toast } from '../../../components/ui/toast.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';
import { EtaLine } from '../../../components/eta-line.tsx';

const STAGES = ['done', 'running', 'queued', 'retrying', 'failed'] as const;
const b = (chunks: React.ReactNode) => <b>{chunks}</b>;

export default function RunsPage() {
  const t = useTranslations('runs');
  const tc = useTranslations('common');
  const fmt = useFmt();
  const { num, when, month } = fmt;
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const runs = useQuery({ ...trpc.runs.list.queryOptions(), refetchInterval: 5_000 });
  const approve = useMutation(
    trpc.runs.approve.mutationOptions({
      onSuccess: () => {
        toast({ title: t('approvedToast'), variant: 'success' });
        return qc.invalidateQueries({ queryKey: trpc.runs.list.queryKey() });
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {runs.isLoading && <p role="status">{tc('loading')}</p>}
      {runs.error && (
        <p role="alert" className="text-red-700">
          {errorText(runs.error)}
        </p>
      )}
      <AddressesToFix />
      {runs.data?.length === 0 && <Card>{t('empty')}</Card>}
      {runs.data?.map((run) => {
        const pct = run.employeeCount ? (run.sent / run.employeeCount) * 100 : 0;
        const failedPct = run.employeeCount ? (run.failed / run.employeeCount) * 100 : 0;
        const s = run.schedule;
        const reminderCount = run.reminders.queued + run.reminders.running + run.reminders.retrying + run.reminders.done + run.reminders.failed;
        const at = (d: Date) => when(d, run.timeZone);
        return (
          <Card key={run.id}>
            <div data-testid="run" data-run-id={run.id} data-status={run.status} className="space-y-3">
              <div className="flex flex-wrap items-baseline justify-between gap-2">
                <h2 className="text-lg font-semibold">
                  {month(run.month)}{' '}
                  <span data-testid="run-status" className="text-sm font-normal text-slate-700">
                    (<StatusLabel status={run.status} />
                    {run.completedAt && run.status === 'completed' ? <> · {at(run.completedAt)}</> : null})
                  </span>
                </h2>
                <span className="text-sm text-slate-700">{t('started', { when: at(run.startedAt) })}</span>
              </div>
              <div
                className="flex h-3 w-full overflow-hidden rounded bg-slate-200"
                role="progressbar"
                aria-label={t('progress', { month: month(run.month) })}
                aria-valuenow={Math.round(pct)}
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuetext={t('line', { sent: num(run.sent), stuck: num(run.stuck) })}
              >
                <div className="bg-emerald-600" style={{ width: `${pct}%` }} />
                <div className="bg-red-600" style={{ width: `${failedPct}%` }} />
              </div>
              {/* Announced when it changes (polite: not on every poll, only when the text differs). */}
              <p data-testid="run-line" aria-live="polite" className="text-xl font-semibold">
                {t('line', { sent: num(run.sent), stuck: num(run.stuck) })}
              </p>
              {/* Slips per stage: with "no job" they add up to the employee count. */}
              <dl data-testid="run-stages" className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-6">
                {STAGES.map((st) => (
                  <div key={st} data-stage={st}>
                    <dt className="text-slate-700">
                      <StatusLabel status={st} />
                    </dt>
                    <dd className="font-medium">{num(run.slips[st])}</dd>
                  </div>
                ))}
                {run.withoutJob > 0 && (
                  <div data-stage="none">
                    <dt className="text-slate-700">{t('noJob')}</dt>
                    <dd className="font-medium">{num(run.withoutJob)}</dd>
                  </div>
                )}
              </dl>
              <RunDeliveryCounts runId={run.id} />
              {run.failed > 0 && (
                <p className="text-sm">
                  <Link data-testid="run-attention" className="font-medium text-red-700 underline" href={`/employees?month=${run.month}&status=failed`}>
                    {t('needAttention', { count: run.failed })}
                  </Link>{' '}
                  <span className="text-slate-700">{t('fixThenResend')}</span>
                </p>
              )}
              <div className="grid gap-1 text-sm sm:grid-cols-2">
                <p data-testid="run-deadline">
                  {t('deadline')}: <b>{at(run.deadline)}</b>
                </p>
                <p data-testid="run-rate">
                  {t('rate')}:{' '}
                  {run.throughputPerSecond === null ? (
                    <b>—</b>
                  ) : (
                    t.rich('rateValue', { rate: num(run.throughputPerSecond, { maximumFractionDigits: run.throughputPerSecond < 10 ? 2 : 1 }), b })
                  )}
                </p>
                <p data-testid="run-start">
                  {s.firstSentAt
                    ? t.rich('firstSent', { when: at(s.firstSentAt), b })
                    : s.expectedStartAt
                      ? t.rich('expectedStart', { when: at(s.expectedStartAt), count: s.slipsAhead ?? 0, b })
                      : run.remaining > 0
                        ? t('notStarted')
                        : null}
                </p>
                {s.expectedFinishAt && <p data-testid="run-finish">{t.rich('expectedFinish', { when: at(s.expectedFinishAt), b })}</p>}
              </div>
              <p
                data-testid="run-eta"
                data-case={run.eta.facts.case}
                className={`text-sm ${run.eta.kind === 'late' ? 'font-semibold text-red-700' : 'text-slate-800'}`}
              >
                <EtaLine facts={run.eta.facts} />
              </p>
              <div className="flex flex-wrap items-center gap-3">
                {run.approvedAt ? (
                  <span className="text-sm text-emerald-800">{t('approved', { when: at(run.approvedAt) })}</span>
                ) : (
                  <Button disabled={approve.isPending} onClick={() => approve.mutate({ runId: run.id })}>
                    {t('approve')}
                  </Button>
                )}
                {run.remindersAt && (
                  <span data-testid="run-reminders" className="text-sm">
                    {run.reminders.queued > 0 || reminderCount === 0 ? (
                      <>
                        {t('remindersAt', { when: at(run.remindersAt) })}
                        {reminderCount > 0 && (
                          <>
                            {' '}
                            <span data-testid="run-reminders-delayed" data-count={run.reminders.queued}>
                              {t('remindersDelayed', { count: run.reminders.queued })}
                            </span>
                          </>
                        )}
                        {approve.data && approve.variables?.runId === run.id && reminderCount === 0 && (
                          <> {t('remindersPlanned', { count: approve.data.reminders })}</>
                        )}
                      </>
                    ) : (
                      <>
                        {t('remindersDone', { sent: num(run.reminders.done) })}
                        {run.reminders.failed > 0 && t('remindersFailed', { failed: num(run.reminders.failed) })}
                      </>
                    )}
                  </span>
                )}
              </div>
            </div>
          </Card>
        );
      })}
    </div>
  );
}

'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { Button, Card, StatusLabel } from '../../../components/ui.tsx';
import { AddressesToFix, RunDeliveryCounts } from '../../../components/delivery.tsx';
import { SlipGlossary, SlipTally } from '../../../components/slip-state.tsx';
import { confirmDialog } from '../../../components/ui/dialog.tsx';
import { toast } from '../../../components/ui/toast.tsx';
import { useActorName } from '../../../components/words.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';
import { EtaLine } from '../../../components/eta-line.tsx';

const b = (chunks: React.ReactNode) => <b>{chunks}</b>;
/** The words the card uses, explained in its glossary. */
const CARD_WORDS = ['sent', 'queued', 'running', 'retrying', 'failed', 'stuck', 'none'] as const;

export default function RunsPage() {
  const t = useTranslations('runs');
  const tc = useTranslations('common');
  const fmt = useFmt();
  const { num, when, month } = fmt;
  const errorText = useErrorText();
  const actorName = useActorName();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const runs = useQuery({ ...trpc.runs.list.queryOptions(), refetchInterval: 5_000 });
  const approve = useMutation(
    trpc.runs.approve.mutationOptions({
      onSuccess: (r, v) => {
        const tz = runs.data?.find((x) => x.id === v.runId)?.timeZone;
        if (r.already)
          toast({
            title: t('alreadyApproved', { when: when(r.already.approvedAt, tz), who: actorName(r.already.approvedBy), at: when(r.runAt, tz) }),
            variant: 'success',
            testId: 'approve-toast',
          });
        else toast({ title: t('approvedToast'), variant: 'success', testId: 'approve-toast' });
        return qc.invalidateQueries({ queryKey: trpc.runs.list.queryKey() });
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  // Approving emails every employee of the month a reminder: the page says how many and when, and asks first.
  const [asking, setAsking] = useState(false);
  const askApprove = async (runId: string, timeZone: string) => {
    setAsking(true);
    try {
      const plan = await qc.fetchQuery({ ...trpc.runs.approvalPlan.queryOptions({ runId }), staleTime: 0 });
      if (plan.approved) {
        // Approved meanwhile (another tab, a colleague): said, not asked again.
        toast({
          title: t('alreadyApproved', { when: when(plan.approved.at, timeZone), who: actorName(plan.approved.by), at: when(plan.remindersAt, timeZone) }),
          variant: 'success',
          testId: 'approve-toast',
        });
        await qc.invalidateQueries({ queryKey: trpc.runs.list.queryKey() });
        return;
      }
      const ok = await confirmDialog({
        title: t('confirmApproveTitle', { month: month(plan.month) }),
        description: t('confirmApprove', { count: plan.reminders, when: when(plan.remindersAt, timeZone) }),
        confirmLabel: t('confirmApproveButton', { count: plan.reminders }),
      });
      if (ok) approve.mutate({ runId });
    } catch (e) {
      toast({ title: errorText(e), variant: 'error' });
    } finally {
      setAsking(false);
    }
  };
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
      {!!runs.data?.length && <SlipGlossary words={CARD_WORDS} />}
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
                aria-valuetext={t('line', { sent: num(run.sent), failed: num(run.failed), stuck: run.stuck })}
              >
                <div className="bg-emerald-600" style={{ width: `${pct}%` }} />
                <div className="bg-red-600" style={{ width: `${failedPct}%` }} />
              </div>
              {/* Announced when it changes (polite: not on every poll, only when the text differs). */}
              <p data-testid="run-line" aria-live="polite" className="text-xl font-semibold">
                {t('line', { sent: num(run.sent), failed: num(run.failed), stuck: run.stuck })}
              </p>
              {/* Slips per stage: with "no job" they add up to the employee count, shown beside them. */}
              <SlipTally testId="run-stages" slips={run.slips} withoutJob={run.withoutJob} employees={run.employeeCount} />
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
              {/* A warning only for a deadline still ahead that the run would miss; one already behind is said once, calmly. */}
              <p
                data-testid="run-eta"
                data-case={run.eta.facts.case}
                className={`text-sm ${run.eta.facts.case === 'late' || (run.eta.facts.case === 'over-a-week' && run.eta.facts.passedMs === 0) ? 'font-semibold text-red-700' : 'text-slate-800'}`}
              >
                <EtaLine facts={run.eta.facts} />
              </p>
              <div className="flex flex-wrap items-center gap-3">
                {run.approvedAt ? (
                  <span data-testid="run-approved" className="text-sm text-emerald-800">
                    {t('approved', { when: at(run.approvedAt), who: actorName(run.approvedBy) })}
                  </span>
                ) : (
                  <Button data-testid="approve" disabled={approve.isPending || asking} onClick={() => void askApprove(run.id, run.timeZone)}>
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

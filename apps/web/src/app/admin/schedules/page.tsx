'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useLocale, useTranslations } from 'next-intl';
import { Button } from '../../../components/ui.tsx';
import { confirmDialog } from '../../../components/ui/dialog.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { toast } from '../../../components/ui/toast.tsx';
import { describeCronBn, describeCronEn } from '../../../lib/cron.ts';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC, type RouterOutputs } from '../../../lib/trpc.tsx';
import { useActorName, useTaskName } from '../../../components/words.tsx';
import type { Actor } from '@beton/db/actors';
import { useState } from 'react';

type Schedule = RouterOutputs['admin']['schedules'][number];

const BUILTIN = ['sweep-stuck-jobs', 'poll-bank', 'purge-history'] as const;

export default function SchedulesPage() {
  const t = useTranslations('schedules');
  const locale = useLocale();
  const { when, month: monthName } = useFmt();
  const actorName = useActorName();
  const taskName = useTaskName();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const schedules = useQuery(trpc.admin.schedules.queryOptions());
  const alreadyRun = (r: { month: string; startedAt: Date; by: Actor }, timeZone: string) =>
    t('alreadyRun', { month: monthName(r.month), when: when(r.startedAt, timeZone), who: actorName(r.by) });
  const runNow = useMutation(
    trpc.admin.runScheduleNow.mutationOptions({
      onSuccess: (r, v) => {
        const tz = schedules.data?.find((x) => x.id === v.id)?.timeZone;
        const title =
          r.outcome === 'already-run'
            ? alreadyRun(r, tz ?? 'Asia/Dhaka')
            : r.outcome === 'enqueued' && r.month
              ? t('payrollStarted', { month: monthName(r.month), id: String(r.jobId) })
              : t(r.outcome === 'enqueued' ? 'enqueued' : 'alreadyEnqueued', { id: String(r.jobId) });
        toast({ title, variant: 'success', testId: 'schedule-toast' });
        return qc.invalidateQueries({ queryKey: trpc.admin.schedules.queryKey() });
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const describe = locale === 'bn' ? describeCronBn : describeCronEn;
  const label = (s: { id: string; kind: string; label: string; companyName: string | null }) => {
    if (s.kind === 'payroll') return t('payroll', { company: s.companyName ?? '' });
    return (BUILTIN as readonly string[]).includes(s.id) ? t(`builtin.${s.id as (typeof BUILTIN)[number]}`) : s.label;
  };
  // "Run now" says first what it would do: a payroll names its month, its company and how many
  // slips it emails; a month already run says when and by whom, and nothing is started again.
  const [asking, setAsking] = useState<string | null>(null);
  const askRun = async (s: Schedule) => {
    setAsking(s.id);
    try {
      const plan = await qc.fetchQuery({ ...trpc.admin.runNowPlan.queryOptions({ id: s.id }), staleTime: 0 });
      if (plan.kind === 'payroll' && plan.alreadyRun) {
        toast({ title: alreadyRun({ month: plan.month, ...plan.alreadyRun }, s.timeZone), variant: 'success', testId: 'schedule-toast' });
        return;
      }
      const ok =
        plan.kind === 'payroll'
          ? await confirmDialog({
              title: t('confirmRunPayroll', { month: monthName(plan.month), company: plan.companyName }),
              description: t('confirmRunPayrollText', { count: plan.employees }),
              confirmLabel: t('confirmRunPayrollButton', { count: plan.employees }),
            })
          : await confirmDialog({
              title: t('confirmRun', { label: label(s) }),
              description: t('confirmRunJobText', { task: taskName(plan.job) }),
              confirmLabel: t('runNow'),
            });
      if (ok) runNow.mutate({ id: s.id });
    } catch (e) {
      toast({ title: errorText(e), variant: 'error' });
    } finally {
      setAsking(null);
    }
  };
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {schedules.error && (
        <p role="alert" className="text-red-800">
          {errorText(schedules.error)}
        </p>
      )}
      <Table className={STACK_ON_PHONE}>
        <THead>
          <tr>
            <Th>{t('schedule')}</Th>
            <Th>{t('when')}</Th>
            <Th>{t('next')}</Th>
            <Th>{t('last')}</Th>
            <Th>{t('actions')}</Th>
          </tr>
        </THead>
        <tbody>
          {schedules.data?.map((s) => (
            <tr key={s.id} data-testid="schedule-row" className="border-t border-slate-100">
              <Td data-label={t('schedule')}>
                {label(s)}
                <div className="font-mono text-xs text-slate-700" translate="no">
                  {s.job}
                </div>
              </Td>
              <Td data-label={t('when')}>
                <span data-testid="schedule-description">{describe(s.cron)}</span> <span className="text-slate-700">({s.timeZone})</span>
                <div className="font-mono text-xs text-slate-700">
                  {s.cron}
                  {s.cronFrom && <> · {t('asRun', { from: s.cronFrom })}</>}
                </div>
              </Td>
              <Td data-label={t('next')}>
                {s.next.map((d) => (
                  <div key={String(d)}>{when(d, s.timeZone)}</div>
                ))}
              </Td>
              <Td data-label={t('last')}>{s.lastRun ? when(s.lastRun, s.timeZone) : '—'}</Td>
              <Td data-label={t('actions')}>
                <Button
                  variant="secondary"
                  data-testid="run-now"
                  disabled={runNow.isPending || asking === s.id}
                  aria-label={t('runNowNamed', { label: label(s) })}
                  onClick={() => void askRun(s)}
                >
                  {t('runNow')}
                </Button>
              </Td>
            </tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}

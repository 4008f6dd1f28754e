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
import { useTRPC } from '../../../lib/trpc.tsx';

const BUILTIN = ['sweep-stuck-jobs', 'poll-bank', 'purge-history'] as const;

export default function SchedulesPage() {
  const t = useTranslations('schedules');
  const locale = useLocale();
  const { when } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const schedules = useQuery(trpc.admin.schedules.queryOptions());
  const runNow = useMutation(
    trpc.admin.runScheduleNow.mutationOptions({
      onSuccess: (r) => {
        toast({ title: t(r.created ? 'enqueued' : 'alreadyEnqueued', { id: String(r.jobId) }), variant: 'success', testId: 'schedule-toast' });
        return qc.invalidateQueries({ queryKey: trpc.admin.schedules.queryKey() });
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const describe = locale === 'bn' ? describeCronBn : describeCronEn;
  const label = (s: { id: string; kind: string; label: string }) => {
    if (s.kind === 'payroll') return t('payroll', { company: s.label.replace(/^Payroll · /, '') });
    return (BUILTIN as readonly string[]).includes(s.id) ? t(`builtin.${s.id as (typeof BUILTIN)[number]}`) : s.label;
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
                <div className="font-mono text-xs text-slate-700">{s.job}</div>
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
                  disabled={runNow.isPending}
                  aria-label={t('runNowNamed', { label: label(s) })}
                  onClick={() => {
                    void confirmDialog({ title: t('confirmRun', { label: label(s) }), confirmLabel: t('runNow') }).then((ok) => {
                      if (ok) runNow.mutate({ id: s.id });
                    });
                  }}
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

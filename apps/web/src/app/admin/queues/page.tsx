'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { Button, Card, StatusBadge, StatusLabel, useStatusText } from '../../../components/ui.tsx';
import { EmailAccountPanel, UnconfirmedEmails } from '../../../components/delivery.tsx';
import { confirmDialog } from '../../../components/ui/dialog.tsx';
import { toast } from '../../../components/ui/toast.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';
import { useActorName, useTaskName } from '../../../components/words.tsx';

/** A queue's or a worker's name inside a sentence: an identifier, not words to translate. */
const code = (chunks: React.ReactNode) => (
  <span translate="no" className="font-mono text-xs">
    {chunks}
  </span>
);

/** A 60-bar chart of finished attempts per minute (its totals are its accessible name). */
function Chart({ points }: { points: Array<{ minute: Date; done: number; failed: number }> }) {
  const t = useTranslations('queues');
  const { num } = useFmt();
  const now = Math.floor(Date.now() / 60_000);
  const bars = Array.from({ length: 60 }, (_, i) => {
    const m = now - 59 + i;
    const p = points.find((x) => Math.floor(new Date(x.minute).getTime() / 60_000) === m);
    return { done: p?.done ?? 0, failed: p?.failed ?? 0 };
  });
  const max = Math.max(1, ...bars.map((b) => b.done + b.failed));
  const done = bars.reduce((n, b) => n + b.done, 0);
  const failed = bars.reduce((n, b) => n + b.failed, 0);
  return (
    <div className="flex h-16 items-end gap-px" role="img" aria-label={t('chart', { done: num(done), failed: num(failed) })}>
      {bars.map((b, i) => (
        <div key={i} className="flex flex-1 flex-col justify-end">
          <div className="bg-red-500" style={{ height: `${(b.failed / max) * 64}px` }} />
          <div className="bg-emerald-600" style={{ height: `${(b.done / max) * 64}px` }} />
        </div>
      ))}
    </div>
  );
}

export default function QueuesPage() {
  const t = useTranslations('queues');
  const tc = useTranslations('common');
  const { num, when, age } = useFmt();
  const statusText = useStatusText();
  const taskName = useTaskName();
  const actorName = useActorName();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const data = useQuery({ ...trpc.admin.queues.queryOptions(), refetchInterval: 5_000 });
  const stuck = useQuery({ ...trpc.admin.stuck.queryOptions(), refetchInterval: 10_000 });
  const pauses = useQuery({ ...trpc.admin.queuePauses.queryOptions(), refetchInterval: 5_000 });
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.pathKey() });
  const pause = useMutation(
    trpc.admin.pauseQueue.mutationOptions({
      onSuccess: (r, v) => {
        toast({ title: t(r.paused ? 'pausedToast' : 'alreadyPaused', { queue: v.queue }), variant: 'success', testId: 'queue-toast' });
        return refresh();
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const resume = useMutation(
    trpc.admin.resumeQueue.mutationOptions({
      onSuccess: (r, v) => {
        toast({ title: t(r.resumed ? 'resumedToast' : 'alreadyRunning', { queue: v.queue }), variant: 'success', testId: 'queue-toast' });
        return refresh();
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const askPause = async (queue: string) => {
    if (
      await confirmDialog({ title: t('confirmPause', { queue }), description: t('confirmPauseText'), confirmLabel: t('pauseNamed', { queue }), danger: true })
    )
      pause.mutate({ queue });
  };
  const d = data.data;
  // Resuming lets the queue's waiting jobs go (emails, for send-email): how many, said before it asks.
  const askResume = async (queue: string) => {
    const waiting = d?.queues.find((q) => q.queue === queue)?.counts.queued ?? 0;
    if (
      await confirmDialog({
        title: t('confirmResume', { queue }),
        description: t('confirmResumeText', { count: waiting }),
        confirmLabel: t('resumeNamed', { queue }),
      })
    )
      resume.mutate({ queue });
  };
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {data.error && (
        <p role="alert" className="text-red-800">
          {errorText(data.error)}
        </p>
      )}
      <EmailAccountPanel waiting={d?.queues.find((q) => q.queue === 'send-email')?.counts.queued ?? 0} />
      <UnconfirmedEmails admin />
      {d?.limits.length || d?.rates.length ? (
        <Card>
          <h2 className="font-semibold">{t('limits')}</h2>
          <ul className="text-sm">
            {d.limits.map((l) => (
              <li key={`c-${l.key}`} data-testid={`concurrency-${l.key}`}>
                <span translate="no">{l.key}</span>: <b>{t('inFlight', { inUse: num(l.inUse), max: num(l.max) })}</b>
              </li>
            ))}
            {d.rates.map((r) => (
              <li key={`r-${r.key}`} data-testid={`rate-${r.key}`}>
                <span translate="no">{r.key}</span>:{' '}
                <b>
                  {t('rateUse', {
                    used: num(r.inUsePerSecond, { maximumFractionDigits: 1, minimumFractionDigits: 1 }),
                    max: num(r.perSecond),
                    window: num(d.rateWindowSeconds),
                  })}
                </b>
              </li>
            ))}
          </ul>
        </Card>
      ) : null}
      <div className="grid gap-4 md:grid-cols-2">
        {d?.queues.map((q) => {
          const limit = d.limitDefs.find((x) => x.queue === q.queue)?.limits;
          const paused = pauses.data?.find((p) => p.queue === q.queue);
          const limitText = [
            limit?.concurrency ? t('limitConcurrency', { max: num(limit.concurrency.max) }) : null,
            limit?.rate ? t('limitRate', { rate: num(limit.rate.perSecond) }) : null,
          ]
            .filter(Boolean)
            .join(' · ');
          return (
            <Card key={q.queue} data-testid="queue-card" data-queue={q.queue} data-paused={paused ? 'true' : 'false'}>
              <div className="flex flex-wrap items-center justify-between gap-2">
                <h2 className="font-semibold" translate="no">
                  {q.queue}
                </h2>
                <div aria-live="polite" className="flex items-center gap-2">
                  <StatusBadge status={paused ? 'paused' : 'running'} />
                  {paused ? (
                    <Button variant="secondary" disabled={resume.isPending} onClick={() => void askResume(q.queue)}>
                      {t('resumeNamed', { queue: q.queue })}
                    </Button>
                  ) : (
                    <Button variant="secondary" disabled={pause.isPending} onClick={() => void askPause(q.queue)}>
                      {t('pauseNamed', { queue: q.queue })}
                    </Button>
                  )}
                </div>
              </div>
              {paused && (
                <p data-testid="queue-paused" className="mt-1 text-sm text-amber-900">
                  {t('paused', {
                    when: when(paused.pausedAt),
                    reason: paused.errorCode === 'paused_by_admin' ? t('pausedBy', { by: actorName(paused.by) }) : paused.reason,
                  })}
                </p>
              )}
              <dl className="my-2 grid grid-cols-3 gap-2 text-sm sm:grid-cols-6">
                {(['queued', 'running', 'retrying', 'failed', 'done'] as const).map((s) => (
                  <div key={s} data-count={s}>
                    <dt className="text-slate-700">
                      <StatusLabel status={s} />
                    </dt>
                    <dd className="font-medium">{num(q.counts[s])}</dd>
                  </div>
                ))}
                {/* Not due yet: waiting on purpose (e.g. the approval reminders), not stuck. */}
                <div data-count="delayed">
                  <dt className="text-slate-700">
                    <StatusLabel status="delayed" />
                  </dt>
                  <dd className="font-medium">{num(q.delayed)}</dd>
                </div>
              </dl>
              <p className="text-sm">{t('oldestWaiting', { age: age(q.oldestWaitingSeconds) })}</p>
              {limitText && <p className="text-sm text-slate-700">{t('limit', { text: limitText })}</p>}
              <Chart points={q.perMinute} />
            </Card>
          );
        })}
      </div>
      <Card>
        <h2 className="font-semibold">{t('delayedTitle')}</h2>
        {d?.delayed.length === 0 && <p className="text-sm text-slate-700">{tc('none')}</p>}
        <ul className="text-sm">
          {d?.delayed.map((x) => (
            <li key={`${x.queue}-${x.task}-${new Date(x.dueAt).toISOString()}`} data-testid="delayed-group">
              {t.rich('delayedLine', {
                count: x.n,
                task: taskName(x.task),
                queue: x.queue,
                code,
                when: when(x.dueAt),
                due: (chunks) => <time dateTime={new Date(x.dueAt).toISOString()}>{chunks}</time>,
              })}
            </li>
          ))}
        </ul>
        <p className="mt-1 text-xs text-slate-700">{t('recurringNote')}</p>
      </Card>
      <Card>
        <h2 className="font-semibold">{t('stuckTitle')}</h2>
        {stuck.data?.length === 0 && <p className="text-sm text-slate-700">{tc('none')}</p>}
        <ul className="text-sm">
          {stuck.data?.map((j) => (
            <li key={j.id} data-testid="stuck-job" data-job-id={j.id} className="break-words">
              {t.rich('stuckLine', {
                id: String(j.id),
                task: taskName(j.taskName),
                code,
                status: statusText(j.status),
                reason: t(`stuckReason.${j.reason.code}`, { age: age(j.reason.seconds) }),
                worker: j.workerId ?? '—',
                since: when(j.startedAt),
                heartbeat: j.heartbeatAt ? when(j.heartbeatAt) : '—',
                hb: (chunks) =>
                  j.heartbeatAt ? (
                    <time data-testid="stuck-heartbeat" dateTime={new Date(j.heartbeatAt).toISOString()}>
                      {chunks}
                    </time>
                  ) : (
                    <>{chunks}</>
                  ),
              })}
            </li>
          ))}
        </ul>
      </Card>
    </div>
  );
}

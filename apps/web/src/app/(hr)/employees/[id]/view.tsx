'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useEffect, useState } from 'react';
import { isCalendarMonth } from '@beton/db/month';
import { Button, Card, StatusBadge } from '../../../../components/ui.tsx';
import { DeliveryEvents, UnconfirmedEmails, usePlainReason } from '../../../../components/delivery.tsx';
import { MonthInput } from '../../../../components/inputs/month-input.tsx';
import { SlipStateBadge } from '../../../../components/slip-state.tsx';
import { confirmDialog } from '../../../../components/ui/dialog.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../../components/ui/table.tsx';
import { useActorName, useAttemptName, useSupersededReason, useTaskName, type SlipAttempt } from '../../../../components/words.tsx';
import { errorData, useErrorText } from '../../../../lib/errors.ts';
import { useFmt } from '../../../../lib/format.ts';
import { thisMonth } from '../../../../lib/month.ts';
import { EmployeeEditor } from './edit.tsx';
import { DateOfBirthCard } from '../../../../components/date-of-birth.tsx';
import { SlipCodeCard } from '../../../../components/slip-code.tsx';
import { useTRPC, type RouterOutputs } from '../../../../lib/trpc.tsx';

type Month = RouterOutputs['employees']['get']['months'][number];
type Job = Month['jobs'][number];

/** An address inside a sentence: data, not words to translate. */
const addr = (chunks: React.ReactNode) => (
  <span translate="no" className="break-all">
    {chunks}
  </span>
);

const sameAttempt = (a: SlipAttempt, b: SlipAttempt) => a.kind === b.kind && (a.kind === 'run' || a.n === b.n);

/**
 * One month's slip told as one story: its state and where it was delivered, then each attempt
 * at it in order — the original (the monthly run), each resend, each extra copy — with who asked
 * for it, its PDF, and its steps in words; the month's other emails (the approval reminder) last.
 */
function MonthHistory({ m }: { m: Month }) {
  const t = useTranslations('employee');
  const { when, month: monthName, num } = useFmt();
  const reason = usePlainReason();
  const actorName = useActorName();
  const attemptName = useAttemptName();
  const superseded = useSupersededReason();
  const taskName = useTaskName();
  const attempts: SlipAttempt[] = [];
  for (const a of [...m.jobs.flatMap((j) => (j.attempt ? [j.attempt] : [])), ...m.slips.map((s) => s.attempt)])
    if (!attempts.some((x) => sameAttempt(x, a))) attempts.push(a);
  attempts.sort((a, b) => (a.kind === 'run' ? -1 : b.kind === 'run' ? 1 : (a.n ?? 0) - (b.n ?? 0)));
  const others = m.jobs.filter((j) => !j.attempt);
  const jobLine = (j: Job) => (
    <li key={j.id} data-testid="history-job" data-task={j.taskName} data-status={j.status} className="rounded border border-slate-200 p-2">
      <div className="flex flex-wrap items-center gap-2">
        <span className="font-medium">{taskName(j.taskName)}</span>
        <StatusBadge status={j.status} />
        {j.status === 'failed' && (
          <span data-testid="job-reason" className="text-red-800">
            {reason(j.lastErrorCode)}
          </span>
        )}
        {j.supersededBy && (
          <span data-testid="superseded-reason" className="text-slate-700">
            {superseded(j.supersededBy)}
          </span>
        )}
      </div>
      {j.attemptLog.length > 0 && (
        <Table className={`mt-1 text-xs ${STACK_ON_PHONE}`}>
          <THead>
            <tr>
              <Th>{t('attempt')}</Th>
              <Th>{t('attemptTime')}</Th>
              <Th>{t('attemptResult')}</Th>
              <Th>{t('attemptReason')}</Th>
            </tr>
          </THead>
          <tbody>
            {j.attemptLog.map((a, i) => (
              <tr key={i} className="border-t border-slate-100">
                <Td data-label={t('attempt')}>{num(a.attempt)}</Td>
                <Td data-label={t('attemptTime')}>{when(a.startedAt)}</Td>
                <Td data-label={t('attemptResult')}>
                  <StatusBadge status={a.outcome} />
                </Td>
                <Td data-label={t('attemptReason')} className="text-red-800">
                  {a.errorCode && a.outcome !== 'superseded' ? reason(a.errorCode) : ''}
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </li>
  );
  return (
    <Card data-testid="history-month" data-month={m.month}>
      <div className="mb-2 flex flex-wrap items-center gap-3">
        <h3 className="font-semibold">{monthName(m.month)}</h3>
        <span data-testid="month-state" data-state={m.state} className="text-sm">
          {t.rich('monthState', { state: () => <SlipStateBadge state={m.state} /> })}
        </span>
        {m.delivered && (
          <span data-testid="month-delivered" className="text-sm text-emerald-800">
            {t.rich('deliveredTo', { attempt: attemptName(m.delivered.attempt), to: m.delivered.to, addr })}
            {m.delivered.sentAt && <> · {when(m.delivered.sentAt)}</>}
          </span>
        )}
      </div>
      <ol className="space-y-3">
        {attempts.map((a) => {
          const asked = a.kind === 'run' ? undefined : m.resends.find((r) => r.n === a.n);
          const slips = m.slips.filter((s) => sameAttempt(s.attempt, a));
          const jobs = m.jobs.filter((j) => j.attempt && sameAttempt(j.attempt, a)).reverse();
          return (
            <li key={`${a.kind}-${a.n}`} data-testid="history-attempt" data-attempt={a.kind === 'run' ? 'run' : `${a.kind}-${a.n}`} className="space-y-1">
              <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1 text-sm">
                <h4 className="font-semibold">{t('attemptTitle', { attempt: a.kind, n: num(a.n ?? 0) })}</h4>
                {asked && (
                  <span data-testid="asked-by" className="text-slate-700">
                    {t('askedBy', { who: actorName(asked.requestedBy), when: when(asked.requestedAt) })}
                  </span>
                )}
                {slips.map((s) => (
                  <a key={s.id} data-testid="slip-pdf" className="text-indigo-700 underline" href={`/api/slips/${s.id}/pdf`} target="_blank" rel="noreferrer">
                    {t('pdfOf', { month: monthName(m.month), attempt: attemptName(s.attempt), size: num(Math.round(s.bytes / 1024)) })}
                  </a>
                ))}
              </div>
              <ul className="space-y-2 text-sm">{jobs.map(jobLine)}</ul>
            </li>
          );
        })}
      </ol>
      {others.length > 0 && (
        <div className="mt-3">
          <h4 className="text-sm font-semibold">{t('otherEmails')}</h4>
          <ul className="mt-1 space-y-2 text-sm">{others.map(jobLine)}</ul>
        </div>
      )}
    </Card>
  );
}

export function EmployeeView({ id }: { id: number }) {
  const t = useTranslations('employee');
  const tc = useTranslations('common');
  const { when, month: monthName, num } = useFmt();
  const reason = usePlainReason();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const detail = useQuery(trpc.employees.get.queryOptions({ id }));
  const refreshDetail = () => qc.invalidateQueries({ queryKey: trpc.employees.get.queryKey({ id }) });
  const [month, setMonth] = useState(() => thisMonth());
  useEffect(() => {
    const m = detail.data?.months.find((x) => isCalendarMonth(x.month))?.month;
    if (m) setMonth(m);
  }, [detail.data?.months.length]);
  const resend = useMutation(trpc.employees.resend.mutationOptions({ onSuccess: refreshDetail }));
  const copy = useMutation(trpc.employees.sendCopy.mutationOptions({ onSuccess: refreshDetail }));
  // The job whose progress shows: the resend (new or already on its way), or the copy.
  const [tracked, setTracked] = useState<number | undefined>(undefined);
  useEffect(() => {
    if (resend.data && resend.data.outcome !== 'delivered') setTracked(resend.data.jobId);
  }, [resend.data]);
  useEffect(() => {
    if (copy.data) setTracked(copy.data.jobId);
  }, [copy.data]);
  const jobId = tracked;
  const status = useQuery({
    ...trpc.employees.resendStatus.queryOptions({ jobId: jobId ?? 0 }),
    enabled: jobId !== undefined,
    refetchInterval: (q) => (q.state.data && ['done', 'failed'].includes(q.state.data.overall) ? false : 1_000),
  });
  useEffect(() => {
    if (status.data?.overall === 'done' || status.data?.overall === 'failed') void refreshDetail();
  }, [status.data?.overall]);

  const delivered = detail.data?.months.find((m) => m.month === month)?.delivered ?? null;
  const sendCopy = async () => {
    const to = detail.data?.email ?? '';
    if (
      await confirmDialog({
        title: t('confirmCopyTitle'),
        description: t.rich('confirmCopy', { month: monthName(month), to, addr }),
        confirmLabel: t('confirmCopyButton'),
      })
    )
      copy.mutate({ id, month });
  };
  // Resending emails the employee: the page names the month and the address, and asks first.
  const askResend = async () => {
    if (
      await confirmDialog({
        title: t('confirmResendTitle', { month: monthName(month) }),
        description: t.rich('confirmResend', { to: detail.data?.email ?? '', addr }),
        confirmLabel: t('confirmResendButton'),
      })
    ) {
      setTracked(undefined);
      copy.reset();
      resend.mutate({ id, month });
    }
  };
  if (detail.error)
    return (
      <Card>
        <p role="alert" className="text-red-800">
          {errorData(detail.error)?.code === 'NOT_FOUND' ? t('notFound') : errorText(detail.error)}
        </p>
      </Card>
    );
  if (!detail.data) return <p role="status">{tc('loading')}</p>;
  const e = detail.data;
  const actionError = resend.error ?? copy.error;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">
          <span translate="no">{e.nameLatin}</span>{' '}
          <span lang="bn" translate="no" className="text-slate-700">
            {e.nameBengali}
          </span>
        </h1>
        <p className="font-mono text-sm text-slate-700" translate="no">
          {e.code}
        </p>
      </div>
      <EmployeeEditor id={id} />
      <div className="grid gap-4 md:grid-cols-2">
        <SlipCodeCard id={id} />
        <DateOfBirthCard id={id} />
        <Card>
          <h2 className="mb-2 font-semibold">{t('resendTitle')}</h2>
          <div className="flex flex-wrap items-end gap-2">
            <MonthInput
              id="resend-month"
              label={t('resendMonth')}
              value={month}
              onChange={(v) => {
                if (!v) return;
                setMonth(v);
                resend.reset();
                copy.reset();
              }}
            />
            <Button data-testid="resend" disabled={resend.isPending} onClick={() => void askResend()}>
              {t('resend')}
            </Button>
            {delivered && (
              <Button variant="secondary" disabled={copy.isPending} onClick={() => void sendCopy()}>
                {t('sendCopy')}
              </Button>
            )}
          </div>
          <p className="mt-1 text-xs text-slate-700">{t('resendHint')}</p>
          <div aria-live="polite" className="space-y-2">
            {actionError && (
              <p role="alert" className="mt-2 text-sm text-red-800">
                {errorText(actionError)}
              </p>
            )}
            {resend.data?.outcome === 'delivered' && (
              <p className="mt-2 text-sm text-emerald-800" data-testid="resend-outcome" data-outcome="delivered">
                {t('alreadyDelivered', { to: resend.data.to, when: resend.data.sentAt ? when(resend.data.sentAt) : 'none' })}
              </p>
            )}
            {resend.data?.outcome === 'in-progress' && (
              <p className="mt-2 text-sm text-indigo-900" data-testid="resend-outcome" data-outcome="in-progress">
                {t('onItsWay')}
                {resend.data.promoted ? ` ${t('promoted')}` : ''}
              </p>
            )}
            {copy.data && (
              <p className="mt-2 text-sm" data-testid="copy-outcome">
                {t(copy.data.created ? 'copyQueued' : 'copyAlready', { n: num(copy.data.copy), to: copy.data.to })}
              </p>
            )}
            {jobId !== undefined && (
              <p className="mt-2 text-sm" data-testid="resend-status">
                {t('resendStatus')} <StatusBadge status={status.data?.overall ?? 'queued'} />
                {status.data?.retrying && <span className="ml-2 text-amber-900">{t('retryingNotice')}</span>}
                {status.data?.overall === 'failed' && <span className="ml-2 text-red-800">{t('failedNotice', { reason: reason(null) })}</span>}
              </p>
            )}
          </div>
        </Card>
      </div>
      <h2 className="text-lg font-semibold">{t('history')}</h2>
      {e.months.length === 0 && <Card>{t('noSlips')}</Card>}
      {e.months.map((m) => (
        <MonthHistory key={m.month} m={m} />
      ))}
      <UnconfirmedEmails employeeId={id} />
      <DeliveryEvents employeeId={id} />
    </div>
  );
}

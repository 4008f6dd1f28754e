'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useEffect, useState } from 'react';
import { isCalendarMonth } from '@beton/db/month';
import { Button, Card, Field, INPUT, StatusBadge } from '../../../../components/ui.tsx';
import { DeliveryEvents, usePlainReason } from '../../../../components/delivery.tsx';
import { confirmDialog } from '../../../../components/ui/dialog.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../../components/ui/table.tsx';
import { toast } from '../../../../components/ui/toast.tsx';
import { errorData, fieldError, useErrorText } from '../../../../lib/errors.ts';
import { useFmt } from '../../../../lib/format.ts';
import { thisMonth } from '../../../../lib/month.ts';
import { EmployeeEditor } from './edit.tsx';
import { DateOfBirthCard } from '../../../../components/date-of-birth.tsx';
import { SlipCodeCard } from '../../../../components/slip-code.tsx';
import { useTRPC } from '../../../../lib/trpc.tsx';

const STAGES = ['render-slip', 'send-slip-email'] as const;

export function EmployeeView({ id }: { id: number }) {
  const t = useTranslations('employee');
  const tc = useTranslations('common');
  const { when, month: monthName, num } = useFmt();
  const reason = usePlainReason();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const detail = useQuery(trpc.employees.get.queryOptions({ id }));
  const [email, setEmail] = useState('');
  useEffect(() => {
    if (detail.data) setEmail(detail.data.email);
  }, [detail.data?.email]);
  const refreshDetail = () => qc.invalidateQueries({ queryKey: trpc.employees.get.queryKey({ id }) });
  const updateEmail = useMutation(
    trpc.employees.updateEmail.mutationOptions({
      onSuccess: () => {
        toast({ title: t('emailSaved'), variant: 'success' });
        return refreshDetail();
      },
    }),
  );
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
        description: t('confirmCopy', { month: monthName(month), to }),
        confirmLabel: t('confirmCopyButton'),
      })
    )
      copy.mutate({ id, month });
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
  const emailError = updateEmail.error ? (fieldError(updateEmail.error, 'email') ?? errorText(updateEmail.error)) : null;
  const actionError = resend.error ?? copy.error;
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">
          {e.nameLatin}{' '}
          <span lang="bn" className="text-slate-700">
            {e.nameBengali}
          </span>
        </h1>
        <p className="font-mono text-sm text-slate-700">{e.code}</p>
      </div>
      <EmployeeEditor id={id} />
      <div className="grid gap-4 md:grid-cols-2">
        <Card>
          <h2 className="mb-2 font-semibold">{t('emailTitle')}</h2>
          <form
            className="space-y-2"
            noValidate
            onSubmit={(ev) => {
              ev.preventDefault();
              updateEmail.mutate({ id, email });
            }}
          >
            <Field id="employee-email" label={t('emailLabel')} error={emailError}>
              <input
                id="employee-email"
                name="email"
                type="email"
                value={email}
                onChange={(ev) => {
                  setEmail(ev.target.value);
                  updateEmail.reset();
                }}
                aria-invalid={!!emailError}
                aria-describedby={emailError ? 'employee-email-error' : undefined}
                data-testid="employee-email"
                className={`${INPUT} ${emailError ? 'border-red-600' : ''}`}
              />
            </Field>
            {emailError && (
              <span data-testid="email-error" className="sr-only">
                {emailError}
              </span>
            )}
            <div aria-live="polite">
              {updateEmail.isSuccess && (
                <p data-testid="email-saved" className="text-sm text-emerald-800">
                  {tc('saved')}
                </p>
              )}
            </div>
            <Button type="submit" disabled={updateEmail.isPending}>
              {t('saveEmail')}
            </Button>
          </form>
        </Card>
        <SlipCodeCard id={id} />
        <DateOfBirthCard id={id} />
        <Card>
          <h2 className="mb-2 font-semibold">{t('resendTitle')}</h2>
          <div className="flex flex-wrap items-end gap-2">
            <Field id="resend-month" label={t('resendMonth')}>
              <input
                id="resend-month"
                type="month"
                value={month}
                onChange={(ev) => {
                  if (ev.target.value) {
                    setMonth(ev.target.value);
                    resend.reset();
                    copy.reset();
                  }
                }}
                className={INPUT}
              />
            </Field>
            <Button
              disabled={resend.isPending}
              onClick={() => {
                setTracked(undefined);
                copy.reset();
                resend.mutate({ id, month });
              }}
            >
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
        <Card key={m.month}>
          <div className="mb-2 flex flex-wrap items-center gap-3">
            <h3 className="font-semibold">{monthName(m.month)}</h3>
            {m.delivered && (
              <span data-testid="month-delivered" className="text-sm text-emerald-800">
                {t('deliveredTo', { to: m.delivered.to })}
                {m.delivered.sentAt && <> · {when(m.delivered.sentAt)}</>}
              </span>
            )}
            {m.slips.map((s) => (
              <a key={s.id} className="text-sm text-indigo-700 underline" href={`/api/slips/${s.id}/pdf`} target="_blank" rel="noreferrer">
                {t('pdf', { month: monthName(m.month), size: num(Math.round(s.bytes / 1024)) })}
              </a>
            ))}
          </div>
          {m.resends.length > 0 && (
            <ul className="mb-2 text-xs text-slate-700" data-testid="resends">
              {m.resends.map((r) => (
                <li key={r.n}>{t('requestedBy', { what: t(r.copy ? 'copyN' : 'resendN', { n: num(r.n) }), when: when(r.requestedAt), by: r.requestedBy })}</li>
              ))}
            </ul>
          )}
          <ul className="space-y-2 text-sm">
            {m.jobs.map((j) => (
              <li key={j.id} className="rounded border border-slate-200 p-2">
                <div className="flex flex-wrap items-center gap-2">
                  <span className="font-medium">
                    {t(`stage.${(STAGES as readonly string[]).includes(j.taskName) ? (j.taskName as (typeof STAGES)[number]) : 'other'}`)}
                  </span>
                  <StatusBadge status={j.status} />
                  {j.status === 'failed' && (
                    <span data-testid="job-reason" className="text-red-800">
                      {reason(j.lastErrorCode)}
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
                            {a.errorCode ? reason(a.errorCode) : ''}
                          </Td>
                        </tr>
                      ))}
                    </tbody>
                  </Table>
                )}
              </li>
            ))}
          </ul>
        </Card>
      ))}
      <DeliveryEvents employeeId={id} />
    </div>
  );
}

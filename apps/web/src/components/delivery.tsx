'use client';
/**
 * Delivery truth from SendGrid's Event Webhook (issue 16), as small components the HR and admin
 * pages include: a run's delivered / bounced / dropped / awaiting counts, the "fix these
 * addresses" list, an employee's delivery history, and the admin's email-queue panel with its
 * "resume" action. HR sees plain reasons, never the provider's text or job keys.
 */
import { WEBHOOK_OUTCOMES } from '@beton/payroll/webhook-outcomes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useErrorText } from '../lib/errors.ts';
import { useFmt } from '../lib/format.ts';
import { useTRPC } from '../lib/trpc.tsx';
import { Button, Card } from './ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from './ui/table.tsx';
import { confirmDialog } from './ui/dialog.tsx';
import { toast } from './ui/toast.tsx';

/** A plain reason for HR from an error code or a delivery state: messages `reasons.*`. */
const REASONS = [
  'invalid_recipient',
  'provider_unavailable',
  'rate_limited',
  'timeout',
  'connection_reset',
  'database_unavailable',
  'message_too_large',
  'invalid_payload',
  'rejected',
  'unexpected',
  'bounced',
  'dropped',
  'spam_report',
] as const;
export function usePlainReason(): (code: string | null | undefined) => string {
  const t = useTranslations('reasons');
  return (code) => t(code && (REASONS as readonly string[]).includes(code) ? (code as (typeof REASONS)[number]) : 'other');
}

export function RunDeliveryCounts({ runId }: { runId: string }) {
  const t = useTranslations('delivery');
  const { num } = useFmt();
  const trpc = useTRPC();
  const counts = useQuery({ ...trpc.delivery.runCounts.queryOptions({ runId }), refetchInterval: 5_000 });
  if (!counts.data) return null;
  const c = counts.data;
  const items = [
    ['delivered', c.delivered],
    ['bounced', c.bounced],
    ['dropped', c.dropped],
    ['awaiting', c.awaiting],
    ['unconfirmed', c.unconfirmed],
    ['resentOnProof', c.resentOnProof],
    ['resentByPerson', c.resentByPerson],
  ] as const;
  return (
    <dl data-testid="run-delivery" className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
      {items.map(([key, n]) => (
        <div key={key} data-delivery={key}>
          <dt className="text-slate-700">{t(key)}</dt>
          <dd className="font-medium">{num(n)}</dd>
        </div>
      ))}
    </dl>
  );
}

export function AddressesToFix() {
  const t = useTranslations('delivery');
  const reason = usePlainReason();
  const trpc = useTRPC();
  const list = useQuery({ ...trpc.delivery.addressesToFix.queryOptions(), refetchInterval: 15_000 });
  if (!list.data?.length) return null;
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold">{t('fixTitle')}</h2>
      <p className="mb-2 text-sm text-slate-700">{t('fixText')}</p>
      <ul data-testid="addresses-to-fix" className="space-y-1 text-sm">
        {list.data.map((a) => (
          <li key={a.employeeId} data-employee-id={a.employeeId} className="break-words">
            <Link className="text-indigo-700 underline" href={`/employees/${a.employeeId}`}>
              {a.name}
            </Link>{' '}
            — <span className="break-all">{a.email}</span> — {reason(a.state)}
          </li>
        ))}
      </ul>
    </Card>
  );
}

/**
 * Emails whose first send is unconfirmed (no batch left to cancel, no evidence), with the evidence
 * gathered and "Send again", which says first that the email may arrive twice. HR sees its
 * company's (of one employee on the employee page); the admin sees all.
 */
export function UnconfirmedEmails({ employeeId, admin = false }: { employeeId?: number; admin?: boolean }) {
  const t = useTranslations('delivery');
  const { when, num } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const hrList = useQuery({ ...trpc.delivery.unconfirmed.queryOptions(), refetchInterval: 15_000, enabled: !admin });
  const adminList = useQuery({ ...trpc.admin.emailAccount.queryOptions(), refetchInterval: 5_000, enabled: admin });
  const done = {
    onSuccess: () => {
      toast({ title: t('sentAgain'), variant: 'success' as const, testId: 'send-again-toast' });
      return qc.invalidateQueries();
    },
    onError: (e: Parameters<typeof errorText>[0]) => toast({ title: errorText(e), variant: 'error' as const }),
  };
  const hrAgain = useMutation(trpc.delivery.sendAgain.mutationOptions(done));
  const adminAgain = useMutation(trpc.admin.sendUnconfirmedAgain.mutationOptions(done));
  const list = (admin ? adminList.data?.unconfirmed : hrList.data)?.filter((u) => employeeId === undefined || u.employeeId === employeeId);
  if (!list?.length) return null;
  const again = (key: string) =>
    void confirmDialog({ title: t('sendAgainTitle'), description: t('sendAgainText'), confirmLabel: t('sendAgain') }).then(
      (ok) => ok && (admin ? adminAgain : hrAgain).mutate({ key }),
    );
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold">{t('unconfirmedTitle')}</h2>
      <p className="mb-2 text-sm text-slate-700">{t('unconfirmedText')}</p>
      <ul data-testid="unconfirmed-emails" className="space-y-2 text-sm">
        {list.map((u) => (
          <li key={u.key} data-key={u.key} className="break-words">
            {t('unconfirmedItem', {
              to: u.recipient,
              since: when(u.recordedAt),
              lookups: num(u.lookups),
              last: u.lastLookedUpAt ? when(u.lastLookedUpAt) : 'none',
            })}{' '}
            <Button onClick={() => again(u.key)} disabled={hrAgain.isPending || adminAgain.isPending}>
              {t('sendAgain')}
            </Button>
          </li>
        ))}
      </ul>
    </Card>
  );
}

const EVENTS = ['processed', 'delivered', 'deferred', 'bounce', 'bounced', 'dropped', 'spamreport', 'open', 'click'] as const;

export function DeliveryEvents({ employeeId }: { employeeId: number }) {
  const t = useTranslations('delivery');
  const { when } = useFmt();
  const reason = usePlainReason();
  const trpc = useTRPC();
  const events = useQuery({ ...trpc.delivery.employeeEvents.queryOptions({ id: employeeId }), refetchInterval: 10_000 });
  if (!events.data?.length) return null;
  const what = (e: string) => ((EVENTS as readonly string[]).includes(e) ? t(`event.${e as (typeof EVENTS)[number]}`) : e);
  const why = (e: string) =>
    e === 'bounce' || e === 'bounced' ? reason('bounced') : e === 'dropped' ? reason('dropped') : e === 'spamreport' ? reason('spam_report') : '';
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold">{t('events')}</h2>
      <Table data-testid="delivery-events" className={STACK_ON_PHONE}>
        <THead>
          <tr>
            <Th>{t('eventTime')}</Th>
            <Th>{t('eventWhat')}</Th>
            <Th>{t('eventAddress')}</Th>
            <Th>{t('eventReason')}</Th>
          </tr>
        </THead>
        <tbody>
          {events.data.map((e, i) => (
            <tr key={i} className="border-t border-slate-100">
              <Td data-label={t('eventTime')}>{when(e.at)}</Td>
              <Td data-label={t('eventWhat')} className="font-medium">
                {what(e.event)}
              </Td>
              <Td data-label={t('eventAddress')} className="break-all">
                {e.email}
              </Td>
              <Td data-label={t('eventReason')}>{why(e.event)}</Td>
            </tr>
          ))}
        </tbody>
      </Table>
    </Card>
  );
}

/** The email account's state; `waiting`: emails queued in send-email (what a resume lets go, said before it asks). */
export function EmailAccountPanel({ waiting }: { waiting: number }) {
  const t = useTranslations('email');
  const { when, num } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const status = useQuery({ ...trpc.admin.emailAccount.queryOptions(), refetchInterval: 5_000 });
  const resume = useMutation(
    trpc.admin.resumeEmail.mutationOptions({
      onSuccess: (r) => {
        toast({ title: t(r.resumed ? 'resumed' : 'notPaused'), variant: 'success', testId: 'email-toast' });
        return qc.invalidateQueries({ queryKey: trpc.admin.pathKey() });
      },
      onError: (e) => toast({ title: errorText(e), variant: 'error' }),
    }),
  );
  const s = status.data;
  if (!s) return null;
  // The webhook's outcomes (email_webhook_counts) in words, numbers in the page's digits ("সংরক্ষিত: ৯,৯৬০").
  const webhook = Object.entries(s.webhook)
    .map(([k, n]) =>
      t('webhookItem', {
        what: (WEBHOOK_OUTCOMES as readonly string[]).includes(k) ? t(`webhookOutcome.${k as (typeof WEBHOOK_OUTCOMES)[number]}`) : k,
        n: num(n),
      }),
    )
    .join(' · ');
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold">{t('title')}</h2>
      <div aria-live="polite">
        {s.paused ? (
          <div data-testid="email-paused" className="space-y-2 text-red-800">
            <p className="font-medium">{t('paused', { when: when(s.paused.pausedAt), code: s.paused.errorCode, reason: s.paused.reason })}</p>
            <p className="text-sm text-slate-700">{t('pausedHelp')}</p>
            <Button
              onClick={() =>
                void confirmDialog({ title: t('confirmResume'), description: t('confirmResumeText', { count: waiting }), confirmLabel: t('resume') }).then(
                  (ok) => ok && resume.mutate(),
                )
              }
              disabled={resume.isPending}
            >
              {t('resume')}
            </Button>
          </div>
        ) : (
          <p data-testid="email-running">{t('running')}</p>
        )}
      </div>
      <p data-testid="unknown-line" className="mt-2 text-sm">
        {t('unknown', {
          open: num(s.unknown.open),
          oldest: s.unknown.oldest ? when(s.unknown.oldest) : t('never'),
          last: s.unknown.lastLookedUpAt ? when(s.unknown.lastLookedUpAt) : t('never'),
          never: num(s.unknown.neverLookedUp),
          unconfirmed: num(s.unconfirmed.length),
          proof: num(s.resentOnProof),
          person: num(s.resentByPerson),
        })}
      </p>
      <p data-testid="webhook-health" className="text-sm text-slate-700">
        {t('webhookHealth', {
          received: s.webhookHealth.lastReceivedAt ? when(s.webhookHealth.lastReceivedAt) : t('never'),
          newest: s.webhookHealth.lastEventAt ? when(s.webhookHealth.lastEventAt) : t('never'),
          lag: num(Math.round((s.webhookHealth.lastLagMs ?? 0) / 1000)),
          maxLag: num(Math.round(s.webhookHealth.maxLagMs / 1000)),
          failures: num(s.webhookHealth.failures),
        })}
      </p>
      <p data-testid="webhook-line" className="text-sm text-slate-700">
        {webhook ? t('webhook', { counts: webhook }) : t('webhookNone')}
      </p>
    </Card>
  );
}

'use client';
/**
 * The words for things the server records as data, in the page's language: who did something
 * (a person by their name, the command line, the scheduler), which attempt at a slip (the
 * original, resend #n, copy #n), why a job was replaced, and what a job does. The server sends
 * codes and values; these hooks write them from the catalogue (`actor.*`, `attempt.*`, `task.*`).
 */
import type { Actor } from '@beton/db/actors';
import { useTranslations } from 'next-intl';
import { useFmt } from '../lib/format.ts';

export function useActorName(): (actor: Actor | null | undefined) => string {
  const t = useTranslations('actor');
  return (a) => (!a ? '—' : a.kind === 'person' ? a.name : a.kind === 'cli' ? t('cli', { user: a.user }) : t('system', { host: a.host }));
}

export interface SlipAttempt {
  kind: 'run' | 'resend' | 'copy';
  n: number | null;
}

/** "the original" / "resend #2" / "copy #3" (numbers in the page's digits). */
export function useAttemptName(): (a: SlipAttempt) => string {
  const t = useTranslations('attempt');
  const { num } = useFmt();
  return (a) => (a.kind === 'run' ? t('run') : t(a.kind, { n: num(a.n ?? 0) }));
}

/** Why a job was closed as superseded, from its code: the slip was delivered by another attempt, or HR's resend replaced it. */
export function useSupersededReason(): (s: SlipAttempt & { code: string | null }) => string {
  const t = useTranslations('attempt');
  const attempt = useAttemptName();
  return (s) => t(s.code === 'superseded_by_resend' ? 'supersededByResend' : 'supersededDelivered', { attempt: attempt(s) });
}

const TASKS = [
  'render-slip',
  'send-slip-email',
  'send-reminder-email',
  'send-bank-status-email',
  'payroll-fanout',
  'submit-bank-transfers',
  'poll-bank',
  'apply-email-events',
  'purge-history',
  'import-employees',
  'build-month-export',
  'sweep-stuck-jobs',
  'noop',
] as const;

/** What a job does, in words ("emailing a slip"); a task this page does not know: "other step". */
export function useTaskName(): (task: string) => string {
  const t = useTranslations('task');
  return (task) => t((TASKS as readonly string[]).includes(task) ? (task as (typeof TASKS)[number]) : 'other');
}

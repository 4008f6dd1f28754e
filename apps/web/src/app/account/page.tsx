'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { PASSWORD_LENGTH } from '@beton/db/password-rules';
import { Button, Card, Field, INPUT } from '../../components/ui.tsx';
import { confirmDialog } from '../../components/ui/dialog.tsx';
import { toast } from '../../components/ui/toast.tsx';
import { authClient } from '../../lib/auth-client.ts';
import { useTRPC } from '../../lib/trpc.tsx';

/** Change your password (required after a one-time password) and sign out of every device. */
export default function AccountPage() {
  const t = useTranslations('account');
  const trpc = useTRPC();
  const router = useRouter();
  const me = useQuery(trpc.auth.me.queryOptions());
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [pending, setPending] = useState(false);

  async function change() {
    setError(null);
    setSaved(false);
    if (next.length < PASSWORD_LENGTH.min) return setError(t('tooShort', { min: PASSWORD_LENGTH.min }));
    if (next !== repeat) return setError(t('differ'));
    setPending(true);
    // Every other session of this user ends with the change (a stolen session does not survive it).
    const { error } = await authClient.changePassword({ currentPassword: current, newPassword: next, revokeOtherSessions: true });
    setPending(false);
    if (error)
      return setError(
        error.status === 429
          ? t('tooMany')
          : // The server says why a new password is refused, in the page's language.
            error.code === 'PASSWORD_REFUSED' && error.message
            ? error.message
            : error.status === 400 && /password/i.test(error.message ?? '') && !/invalid/i.test(error.message ?? '')
              ? error.message!
              : t('wrongCurrent'),
      );
    setCurrent('');
    setNext('');
    setRepeat('');
    setSaved(true);
    toast({ title: t('changed'), variant: 'success' });
    await me.refetch();
    router.refresh();
  }

  async function signOutEverywhere() {
    if (!(await confirmDialog({ title: t('confirmSignOut'), confirmLabel: t('signOutEverywhere'), danger: true }))) return;
    await authClient.revokeSessions().catch(() => {});
    router.push('/login');
    router.refresh();
  }

  const mustChange = me.data?.mustChangePassword === true;
  return (
    <div className="max-w-md space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {mustChange && (
        <p role="status" data-testid="must-change" className="rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900">
          {t('mustChange')}
        </p>
      )}
      <Card>
        <h2 className="mb-3 font-semibold">{t('change')}</h2>
        <form
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            void change();
          }}
        >
          <Field id="current-password" label={t('current')}>
            <input
              id="current-password"
              type="password"
              required
              autoComplete="current-password"
              value={current}
              onChange={(e) => {
                setCurrent(e.target.value);
                setSaved(false);
              }}
              className={INPUT}
            />
          </Field>
          <Field id="new-password" label={t('new')} hint={t('newHint', { min: PASSWORD_LENGTH.min })}>
            <input
              id="new-password"
              type="password"
              required
              minLength={PASSWORD_LENGTH.min}
              maxLength={PASSWORD_LENGTH.max}
              autoComplete="new-password"
              aria-describedby="new-password-hint"
              value={next}
              onChange={(e) => {
                setNext(e.target.value);
                setSaved(false);
              }}
              className={INPUT}
            />
          </Field>
          <Field id="repeat-password" label={t('repeat')}>
            <input
              id="repeat-password"
              type="password"
              required
              autoComplete="new-password"
              value={repeat}
              onChange={(e) => {
                setRepeat(e.target.value);
                setSaved(false);
              }}
              className={INPUT}
            />
          </Field>
          <div aria-live="polite">
            {error && (
              <p role="alert" className="text-sm text-red-700">
                {error}
              </p>
            )}
            {saved && (
              <p data-testid="password-changed" className="text-sm text-emerald-800">
                {t('changed')}
              </p>
            )}
          </div>
          <Button type="submit" disabled={pending}>
            {pending ? '…' : t('submit')}
          </Button>
        </form>
      </Card>
      <Card>
        <h2 className="mb-2 font-semibold">{t('sessions')}</h2>
        <p className="mb-3 text-sm text-slate-700">{t('sessionsText')}</p>
        <Button variant="danger" onClick={() => void signOutEverywhere()}>
          {t('signOutEverywhere')}
        </Button>
      </Card>
    </div>
  );
}

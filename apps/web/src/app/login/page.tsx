'use client';
import { useTranslations } from 'next-intl';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { LanguageSwitch } from '../../components/nav.tsx';
import { Button, Card, Field, INPUT } from '../../components/ui.tsx';
import { authClient } from '../../lib/auth-client.ts';

export default function LoginPage() {
  const t = useTranslations('login');
  const router = useRouter();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function signIn() {
    setPending(true);
    setError(null);
    const { data, error } = await authClient.signIn.email({ email, password });
    if (error || !data) {
      setPending(false);
      setError(error?.status === 429 ? t('tooMany') : error?.status === 401 ? t('wrong') : t('failed', { message: error?.message ?? '' }));
      return;
    }
    // A one-time password (a new user's) is changed before anything else.
    router.push(data.user.mustChangePassword ? '/account' : data.user.role === 'ADMIN' ? '/admin/failed' : '/runs');
    router.refresh();
  }

  return (
    <main className="flex min-h-screen flex-col items-center justify-center gap-4 p-4">
      <Card className="w-full max-w-sm">
        <div className="mb-4 flex items-center justify-between gap-2">
          <h1 className="text-xl font-semibold">{t('title')}</h1>
          <LanguageSwitch />
        </div>
        <form
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            void signIn();
          }}
        >
          <Field id="login-email" label={t('email')}>
            <input
              id="login-email"
              name="email"
              type="email"
              required
              autoComplete="username"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              className={INPUT}
            />
          </Field>
          <Field id="login-password" label={t('password')}>
            <input
              id="login-password"
              name="password"
              type="password"
              required
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              className={INPUT}
            />
          </Field>
          <div aria-live="assertive">
            {error && (
              <p role="alert" className="text-sm text-red-700">
                {error}
              </p>
            )}
          </div>
          <Button type="submit" disabled={pending} className="w-full">
            {pending ? '…' : t('submit')}
          </Button>
        </form>
      </Card>
    </main>
  );
}

'use client';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Button, Card, L } from '../../components/ui.tsx';
import { authClient } from '../../lib/auth-client.ts';

export default function LoginPage() {
  const router = useRouter();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<{ en: string; bn: string } | null>(null);
  const [pending, setPending] = useState(false);

  async function signIn() {
    setPending(true);
    setError(null);
    const { data, error } = await authClient.signIn.email({ email, password });
    if (error || !data) {
      setPending(false);
      setError(error?.status === 429
        ? { en: 'Too many sign-in attempts; try again later', bn: 'অনেকবার চেষ্টা হয়েছে; পরে আবার চেষ্টা করুন' }
        : { en: error?.message || 'Wrong email or password', bn: error?.status === 401 ? 'ইমেইল বা পাসওয়ার্ড ভুল' : 'সাইন ইন হয়নি' });
      return;
    }
    // A one-time password (a new user's) is changed before anything else.
    router.push(data.user.mustChangePassword ? '/account' : data.user.role === 'ADMIN' ? '/admin/failed' : '/runs');
    router.refresh();
  }

  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <Card className="w-full max-w-sm">
        <h1 className="mb-4 text-xl font-semibold"><L en="Sign in" bn="সাইন ইন" /></h1>
        <form className="space-y-3" onSubmit={(e) => { e.preventDefault(); void signIn(); }}>
          <label className="block text-sm"><L en="Email" bn="ইমেইল" />
            <input name="email" type="email" required autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} className="mt-1 w-full rounded border border-slate-300 px-2 py-1.5" />
          </label>
          <label className="block text-sm"><L en="Password" bn="পাসওয়ার্ড" />
            <input name="password" type="password" required autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} className="mt-1 w-full rounded border border-slate-300 px-2 py-1.5" />
          </label>
          {error && <p role="alert" className="text-sm text-red-700"><L en={error.en} bn={error.bn} /></p>}
          <Button type="submit" disabled={pending} className="w-full">{pending ? '…' : 'Sign in · প্রবেশ'}</Button>
        </form>
      </Card>
    </main>
  );
}

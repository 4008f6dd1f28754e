'use client';
import { useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { PASSWORD_LENGTH } from '@beton/db/password-rules';
import { Button, Card, L } from '../../components/ui.tsx';
import { authClient } from '../../lib/auth-client.ts';
import { useTRPC } from '../../lib/trpc.tsx';

/** Change your password (required after a one-time password) and sign out of every device. */
export default function AccountPage() {
  const trpc = useTRPC();
  const router = useRouter();
  const me = useQuery(trpc.auth.me.queryOptions());
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [pending, setPending] = useState(false);
  const input = 'mt-1 w-full rounded border border-slate-300 px-2 py-1.5';

  async function change() {
    setError(null);
    setSaved(false);
    if (next.length < PASSWORD_LENGTH.min) return setError(`The new password needs at least ${PASSWORD_LENGTH.min} characters`);
    if (next !== repeat) return setError('The two new passwords differ');
    setPending(true);
    // Every other session of this user ends with the change (a stolen session does not survive it).
    const { error } = await authClient.changePassword({ currentPassword: current, newPassword: next, revokeOtherSessions: true });
    setPending(false);
    if (error) return setError(error.status === 400 && /password/i.test(error.message ?? '') && !/invalid/i.test(error.message ?? '') ? error.message! : error.status === 429 ? 'Too many attempts; try again in a minute' : 'The current password is wrong');
    setCurrent(''); setNext(''); setRepeat('');
    setSaved(true);
    await me.refetch();
    router.refresh();
  }

  async function signOutEverywhere() {
    if (!window.confirm('Sign out on every device, this one included? · সব ডিভাইস থেকে প্রস্থান করবেন?')) return;
    await authClient.revokeSessions().catch(() => {});
    router.push('/login');
    router.refresh();
  }

  const mustChange = me.data?.mustChangePassword === true;
  return (
    <div className="max-w-md space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Your account" bn="আপনার অ্যাকাউন্ট" /></h1>
      {mustChange && (
        <p role="status" data-testid="must-change" className="rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900">
          <L en="You signed in with a one-time password: choose your own before anything else." bn="এককালীন পাসওয়ার্ড দিয়ে প্রবেশ করেছেন: আগে নিজের পাসওয়ার্ড দিন।" />
        </p>
      )}
      <Card>
        <h2 className="mb-3 font-semibold"><L en="Change password" bn="পাসওয়ার্ড বদলান" /></h2>
        <form className="space-y-3" onSubmit={(e) => { e.preventDefault(); void change(); }}>
          <label className="block text-sm"><L en="Current password" bn="বর্তমান পাসওয়ার্ড" />
            <input aria-label="current password" type="password" required autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} className={input} /></label>
          <label className="block text-sm"><L en={`New password (${PASSWORD_LENGTH.min}+ characters)`} bn="নতুন পাসওয়ার্ড" />
            <input aria-label="new password" type="password" required minLength={PASSWORD_LENGTH.min} maxLength={PASSWORD_LENGTH.max} autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} className={input} /></label>
          <label className="block text-sm"><L en="New password again" bn="নতুন পাসওয়ার্ড আবার" />
            <input aria-label="repeat new password" type="password" required autoComplete="new-password" value={repeat} onChange={(e) => setRepeat(e.target.value)} className={input} /></label>
          {error && <p role="alert" className="text-sm text-red-700">{error}</p>}
          {saved && <p data-testid="password-changed" className="text-sm text-emerald-700"><L en="Password changed; your other sessions were signed out" bn="পাসওয়ার্ড বদলানো হয়েছে" /></p>}
          <Button type="submit" disabled={pending}>{pending ? '…' : 'Change password · বদলান'}</Button>
        </form>
      </Card>
      <Card>
        <h2 className="mb-2 font-semibold"><L en="Sessions" bn="সেশন" /></h2>
        <p className="mb-3 text-sm text-slate-600"><L en="Lost a device, or signed in somewhere you should not have? End every session." bn="সব সেশন বন্ধ করুন।" /></p>
        <Button variant="danger" onClick={() => void signOutEverywhere()}><L en="Sign out everywhere" bn="সব জায়গা থেকে প্রস্থান" /></Button>
      </Card>
    </div>
  );
}

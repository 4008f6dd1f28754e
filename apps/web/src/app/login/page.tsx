'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Button, Card, L } from '../../components/ui.tsx';
import { useTRPC } from '../../lib/trpc.tsx';

export default function LoginPage() {
  const trpc = useTRPC();
  const router = useRouter();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation(trpc.auth.signIn.mutationOptions({
    onSuccess: (user) => { router.push(user.role === 'ADMIN' ? '/admin/failed' : '/runs'); router.refresh(); },
  }));
  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <Card className="w-full max-w-sm">
        <h1 className="mb-4 text-xl font-semibold"><L en="Sign in" bn="সাইন ইন" /></h1>
        <form className="space-y-3" onSubmit={(e) => { e.preventDefault(); signIn.mutate({ email, password }); }}>
          <label className="block text-sm"><L en="Email" bn="ইমেইল" />
            <input name="email" type="email" required autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} className="mt-1 w-full rounded border border-slate-300 px-2 py-1.5" />
          </label>
          <label className="block text-sm"><L en="Password" bn="পাসওয়ার্ড" />
            <input name="password" type="password" required autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} className="mt-1 w-full rounded border border-slate-300 px-2 py-1.5" />
          </label>
          {signIn.error && <p role="alert" className="text-sm text-red-700">{signIn.error.message}</p>}
          <Button type="submit" disabled={signIn.isPending} className="w-full">{signIn.isPending ? '…' : 'Sign in · প্রবেশ'}</Button>
        </form>
      </Card>
    </main>
  );
}

import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { getSessionUser, type SessionUser } from './auth.ts';

/** For server components: the signed-in user, or a redirect to /login. */
export async function requireUser(role?: 'HR' | 'ADMIN'): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect('/login');
  if (role && user.role !== role) redirect(user.role === 'ADMIN' ? '/admin/failed' : '/runs');
  return user;
}

export async function currentUser(): Promise<SessionUser | null> {
  return getSessionUser(await headers());
}

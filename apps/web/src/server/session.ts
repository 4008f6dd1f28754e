import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { loadSession, SESSION_COOKIE, type SessionUser } from './auth.ts';
import { db } from './db.ts';

/** For server components: the signed-in user, or a redirect to /login. */
export async function requireUser(role?: 'HR' | 'ADMIN'): Promise<SessionUser> {
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  const user = await loadSession(db(), token);
  if (!user) redirect('/login');
  if (role && user.role !== role) redirect(user.role === 'ADMIN' ? '/admin/failed' : '/runs');
  return user;
}

export async function currentUser(): Promise<SessionUser | null> {
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  return loadSession(db(), token);
}

import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { getSessionUser, type SessionUser } from './auth.ts';

/** Where a user lands: their role's first page, or the password page while a one-time password is unchanged. */
export function homeOf(user: Pick<SessionUser, 'role' | 'mustChangePassword'>): string {
  if (user.mustChangePassword) return '/account';
  return user.role === 'ADMIN' ? '/admin/failed' : '/runs';
}

/**
 * For server components: the signed-in user, or a redirect to /login. A user with a one-time
 * password is sent to /account to change it (`allowOneTimePassword` for that page only).
 */
export async function requireUser(role?: 'HR' | 'ADMIN', options: { allowOneTimePassword?: boolean } = {}): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect('/login');
  if (user.mustChangePassword && !options.allowOneTimePassword) redirect('/account');
  if (role && user.role !== role) redirect(homeOf(user));
  return user;
}

export async function currentUser(): Promise<SessionUser | null> {
  return getSessionUser(await headers());
}

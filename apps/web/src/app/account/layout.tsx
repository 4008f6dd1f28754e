import type { ReactNode } from 'react';
import { Nav } from '../../components/nav.tsx';
import { companyNameOf } from '../../server/auth.ts';
import { requireUser } from '../../server/session.ts';

export const dynamic = 'force-dynamic';

/** Every signed-in user's own account (a user with a one-time password lands here first). */
export default async function AccountLayout({ children }: { children: ReactNode }) {
  const user = await requireUser(undefined, { allowOneTimePassword: true });
  const company = await companyNameOf(user);
  return (
    <>
      <Nav role={user.role} who={company ? `${company} · ${user.email}` : user.email} />
      <main className="mx-auto max-w-6xl p-4">{children}</main>
    </>
  );
}

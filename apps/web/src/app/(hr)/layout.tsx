import type { ReactNode } from 'react';
import { Nav } from '../../components/nav.tsx';
import { companyNameOf } from '../../server/auth.ts';
import { requireUser } from '../../server/session.ts';

export const dynamic = 'force-dynamic';

export default async function HrLayout({ children }: { children: ReactNode }) {
  const user = await requireUser('HR');
  return (
    <>
      <Nav role="HR" who={`${(await companyNameOf(user)) ?? ''} · ${user.email}`} />
      <main className="mx-auto max-w-6xl p-4">{children}</main>
    </>
  );
}

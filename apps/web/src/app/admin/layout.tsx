import type { ReactNode } from 'react';
import { Nav } from '../../components/nav.tsx';
import { requireUser } from '../../server/session.ts';

export const dynamic = 'force-dynamic';

export default async function AdminLayout({ children }: { children: ReactNode }) {
  const user = await requireUser('ADMIN');
  return (
    <>
      <Nav role="ADMIN" who={user.email} />
      <main className="mx-auto max-w-6xl p-4">{children}</main>
    </>
  );
}

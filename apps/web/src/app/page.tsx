import { redirect } from 'next/navigation';
import { currentUser } from '../server/session.ts';

export const dynamic = 'force-dynamic';

export default async function Home() {
  const user = await currentUser();
  redirect(!user ? '/login' : user.role === 'ADMIN' ? '/admin/failed' : '/runs');
}

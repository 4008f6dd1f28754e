import { redirect } from 'next/navigation';
import { currentUser, homeOf } from '../server/session.ts';

export const dynamic = 'force-dynamic';

export default async function Home() {
  const user = await currentUser();
  redirect(!user ? '/login' : homeOf(user));
}

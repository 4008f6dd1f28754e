'use client';
import Link from 'next/link';
import { usePathname, useRouter } from 'next/navigation';
import { authClient } from '../lib/auth-client.ts';
import { L } from './ui.tsx';

const HR_LINKS = [
  { href: '/runs', en: 'Payroll runs', bn: 'বেতন রান' },
  { href: '/employees', en: 'Employees', bn: 'কর্মচারী' },
  { href: '/months', en: 'Past months', bn: 'আগের মাস' },
  { href: '/settings', en: 'Settings', bn: 'সেটিংস' },
];
const ADMIN_LINKS = [
  { href: '/admin/failed', en: 'Failed jobs', bn: 'ব্যর্থ কাজ' },
  { href: '/admin/queues', en: 'Queues', bn: 'কিউ' },
  { href: '/admin/workers', en: 'Workers', bn: 'ওয়ার্কার' },
  { href: '/admin/schedules', en: 'Schedules', bn: 'সময়সূচি' },
  { href: '/admin/users', en: 'Users', bn: 'ব্যবহারকারী' },
  { href: '/admin/companies', en: 'Companies', bn: 'কোম্পানি' },
];

export function Nav({ role, who }: { role: 'HR' | 'ADMIN'; who: string }) {
  const router = useRouter();
  const path = usePathname();
  const signOut = async () => {
    await authClient.signOut().catch(() => {});
    router.push('/login');
    router.refresh();
  };
  const links = role === 'ADMIN' ? ADMIN_LINKS : HR_LINKS;
  return (
    <header className="border-b border-slate-200 bg-white">
      <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
        <span className="font-semibold text-indigo-700">Beton · বেতন</span>
        <nav className="flex flex-wrap gap-4 text-sm">
          {links.map((l) => (
            <Link key={l.href} href={l.href} className={path.startsWith(l.href) ? 'font-semibold text-indigo-700' : 'text-slate-600 hover:text-slate-900'}>
              <L en={l.en} bn={l.bn} />
            </Link>
          ))}
        </nav>
        <div className="ml-auto flex items-center gap-3 text-sm text-slate-600">
          <Link href="/account" data-testid="who" className="hover:text-slate-900">{who}</Link>
          <button className="underline" onClick={() => void signOut()}>Sign out · প্রস্থান</button>
        </div>
      </div>
    </header>
  );
}

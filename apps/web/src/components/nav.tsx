'use client';
import { useLocale, useTranslations } from 'next-intl';
import Link from 'next/link';
import { usePathname, useRouter } from 'next/navigation';
import { LOCALE_COOKIE, type Locale } from '../i18n/config.ts';
import { authClient } from '../lib/auth-client.ts';

const HR_LINKS = [
  { href: '/runs', key: 'runs' },
  { href: '/employees', key: 'employees' },
  { href: '/months', key: 'months' },
  { href: '/settings', key: 'settings' },
] as const;
const ADMIN_LINKS = [
  { href: '/admin/failed', key: 'failed' },
  { href: '/admin/queues', key: 'queues' },
  { href: '/admin/workers', key: 'workers' },
  { href: '/admin/schedules', key: 'schedules' },
  { href: '/admin/users', key: 'users' },
  { href: '/admin/companies', key: 'companies' },
] as const;

/** The language switch: the other language's name, in that language; a year-long cookie, then the page renders again. */
export function LanguageSwitch() {
  const t = useTranslations('nav');
  const locale = useLocale() as Locale;
  const router = useRouter();
  const other: Locale = locale === 'bn' ? 'en' : 'bn';
  const change = () => {
    document.cookie = `${LOCALE_COOKIE}=${other}; path=/; max-age=31536000; samesite=lax`;
    router.refresh();
  };
  return (
    <button
      type="button"
      data-testid="language-switch"
      lang={other}
      title={t('switchToLabel')}
      onClick={change}
      className="rounded border border-slate-400 px-2 py-0.5 text-sm text-slate-800 hover:bg-slate-100"
    >
      {t('switchTo')}
    </button>
  );
}

export function Nav({ role, who }: { role: 'HR' | 'ADMIN'; who: string }) {
  const t = useTranslations('nav');
  const tc = useTranslations('common');
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
        <span className="font-semibold text-indigo-800">{tc('appName')}</span>
        <nav aria-label={t('main')} className="flex flex-wrap gap-4 text-sm">
          {links.map((l) => {
            const current = path.startsWith(l.href);
            return (
              <Link
                key={l.href}
                href={l.href}
                aria-current={current ? 'page' : undefined}
                className={current ? 'font-semibold text-indigo-800 underline underline-offset-4' : 'text-slate-700 hover:text-slate-900'}
              >
                {t(l.key)}
              </Link>
            );
          })}
        </nav>
        <div className="ml-auto flex flex-wrap items-center gap-3 text-sm text-slate-700">
          <Link href="/account" data-testid="who" translate="no" aria-label={t('account', { who })} className="break-all hover:text-slate-900">
            {who}
          </Link>
          <LanguageSwitch />
          <button type="button" className="underline" onClick={() => void signOut()}>
            {t('signOut')}
          </button>
        </div>
      </div>
    </header>
  );
}

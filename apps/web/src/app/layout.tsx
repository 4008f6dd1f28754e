import type { Metadata } from 'next';
import { NextIntlClientProvider } from 'next-intl';
import { getLocale, getTranslations } from 'next-intl/server';
import type { ReactNode } from 'react';
import { ConfirmHost } from '../components/ui/dialog.tsx';
import { Toaster } from '../components/ui/toast.tsx';
import { Providers } from '../lib/trpc.tsx';
// Bengali must render where the OS has no Bengali font (servers, CI browsers, many phones):
// Noto Sans Bengali (variable weight), self-hosted from our own origin (CSP font-src 'self').
import '@fontsource-variable/noto-sans-bengali';
import './globals.css';

// Every page renders per request: the Content-Security-Policy's nonce (src/proxy.ts) is new on
// each one, and Next puts it on the page's scripts only when the page is rendered for it.
export const dynamic = 'force-dynamic';

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations('common');
  return { title: t('appName'), description: t('appDescription') };
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  // One language at a time (the header's switch sets a cookie); `lang` tells the browser which
  // font and shaping to use, and screen readers which voice.
  const locale = await getLocale();
  return (
    <html lang={locale}>
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased">
        <NextIntlClientProvider>
          <Providers>
            {children}
            <Toaster />
            <ConfirmHost />
          </Providers>
        </NextIntlClientProvider>
      </body>
    </html>
  );
}

import type { Metadata } from 'next';
import localFont from 'next/font/local';
import type { ReactNode } from 'react';
import { Providers } from '../lib/trpc.tsx';
import './globals.css';

// Bengali labels must render even where the OS has no Bengali font (servers, CI browsers).
const bengali = localFont({
  src: '../../../../node_modules/@expo-google-fonts/noto-sans-bengali/400Regular/NotoSansBengali_400Regular.ttf',
  variable: '--font-bengali',
  display: 'swap',
});

// Every page renders per request: the Content-Security-Policy's nonce (src/proxy.ts) is new on
// each one, and Next puts it on the page's scripts only when the page is rendered for it.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = { title: 'Beton — বেতন', description: 'Payroll slips on time, exactly once.' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" className={bengali.variable}>
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}

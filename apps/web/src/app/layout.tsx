import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '../lib/trpc.tsx';
import './globals.css';

export const metadata: Metadata = { title: 'Beton — বেতন', description: 'Payroll slips on time, exactly once.' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}

'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import { useState, type ReactNode } from 'react';
import superjson from 'superjson';
import { config as zodConfig } from 'zod';
import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../server/root.ts';

// In the browser, forms check input with the services' own zod schemas. zod's fast path
// compiles parsers with `new Function`, and even its probe for that is reported as a
// violation of our Content-Security-Policy (no 'unsafe-eval'): run without it.
zodConfig({ jitless: true });

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 2_000, retry: false } } }));
  const [trpcClient] = useState(() => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: '/api/trpc', transformer: superjson })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

/** What each procedure answers, for components that take a part of an answer as a prop. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

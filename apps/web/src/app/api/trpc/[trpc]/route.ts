import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '../../../../server/root.ts';
import { createContext } from '../../../../server/trpc.ts';

export const dynamic = 'force-dynamic';

function handler(req: Request): Promise<Response> {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: ({ req, resHeaders }) => createContext({ req, resHeaders }),
  });
}

export { handler as GET, handler as POST };

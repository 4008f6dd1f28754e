import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { logger } from '../../../../server/logger.ts';
import { REQUEST_ID_HEADER } from '../../../../server/request-meta.ts';
import { appRouter } from '../../../../server/root.ts';
import { answeredCode, createContext } from '../../../../server/trpc.ts';

export const dynamic = 'force-dynamic';

/**
 * tRPC over fetch. Mutations that do not come from our own pages (Origin, JSON) never get
 * here: src/proxy.ts refuses them. Every error of a procedure is one log line with the
 * request id; an unexpected one (500) with its stack, the others (4xx) at info.
 */
function handler(req: Request): Promise<Response> {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: async ({ req, resHeaders }) => {
      const ctx = await createContext({ req, resHeaders });
      resHeaders.set(REQUEST_ID_HEADER, ctx.requestId);
      return ctx;
    },
    onError({ error, path, type, ctx }) {
      const code = answeredCode(error);
      const entry = { requestId: ctx?.requestId, path, type, code, user: ctx?.session?.userId };
      if (code === 'INTERNAL_SERVER_ERROR') logger().error({ ...entry, err: error.cause ?? error }, 'procedure failed');
      else logger().info({ ...entry, message: error.message }, 'procedure refused');
    },
  });
}

export { handler as GET, handler as POST };

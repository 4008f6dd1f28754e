import type { Instrumentation } from 'next';

/**
 * Runs once when the web server starts (before it serves its first request): the request hook
 * that attributes each request to its client's address and gives it an id (server/request-meta.ts).
 * Settings are validated here, so a bad one stops the server at start.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { env } = await import('./env.ts');
  const { installRequestMeta } = await import('./server/request-meta.ts');
  installRequestMeta(env().TRUSTED_PROXIES);
}

/**
 * Next's hook for an error thrown while serving a page or a route handler: one JSON log line
 * with the request id the client got (`x-request-id`), the route and the error with its stack.
 */
export const onRequestError: Instrumentation.onRequestError = async (error, request, context) => {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { logger } = await import('./server/logger.ts');
  const { requestId } = await import('./server/request-meta.ts');
  logger().error(
    { requestId: requestId(request.headers), method: request.method, path: request.path.split('?')[0], route: context.routePath, routeType: context.routeType, err: error },
    'request failed',
  );
};

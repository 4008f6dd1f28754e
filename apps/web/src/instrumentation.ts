import type { Instrumentation } from 'next';

/**
 * Runs once when the web server starts (Next.js instrumentation), before it serves a request:
 * the settings are checked (a missing or malformed one stops the server with one line per
 * problem and exit code 1 instead of failing requests later), then the request hook that
 * attributes each request to its client's address and gives it an id (server/request-meta.ts)
 * is installed, and OpenTelemetry started when the OTEL_* settings ask for it. Not during
 * `next build`, which loads the app without the runtime's settings.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || process.env.NEXT_PHASE === 'phase-production-build') return;
  const [{ failFast }, { env }, { installRequestMeta }] = await Promise.all([import('@beton/config'), import('./env.ts'), import('./server/request-meta.ts')]);
  const settings = failFast('beton-web', env);
  installRequestMeta(settings.TRUSTED_PROXIES);
  // Tracing (docs/tracing.md): only when OTEL_* ask for it; otherwise no OpenTelemetry module loads.
  const { tracingSettings } = await import('@beton/telemetry/settings');
  const tracing = tracingSettings(settings);
  if (tracing) {
    const { startTracing } = await import('@beton/telemetry/start');
    const running = await startTracing(tracing, { defaultServiceName: 'beton-web' });
    process.once('SIGTERM', () => void running.shutdown());
  }
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
    {
      requestId: requestId(request.headers),
      method: request.method,
      path: request.path.split('?')[0],
      route: context.routePath,
      routeType: context.routeType,
      err: error,
    },
    'request failed',
  );
};

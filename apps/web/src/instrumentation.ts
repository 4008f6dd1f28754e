/**
 * Runs once when the web server starts (Next.js instrumentation), before it serves a request:
 * the settings are checked there, so a server with a missing or malformed setting stops with
 * one line per problem and exit code 1 instead of failing requests later. Not during
 * `next build`, which loads the app without the runtime's settings.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || process.env.NEXT_PHASE === 'phase-production-build') return;
  const [{ failFast }, { env }] = await Promise.all([import('@beton/config'), import('./env.ts')]);
  failFast('beton-web', env);
}

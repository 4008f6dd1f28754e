import { env } from '../env.ts';

/** A loopback URL is reached as both 127.0.0.1 and localhost: trust both spellings. */
export function originsOf(baseURL: string): string[] {
  const url = new URL(baseURL);
  const twin = url.hostname === '127.0.0.1' ? 'localhost' : url.hostname === 'localhost' ? '127.0.0.1' : undefined;
  if (!twin) return [url.origin];
  return [url.origin, `${url.protocol}//${twin}${url.port ? `:${url.port}` : ''}`];
}

/**
 * The origins whose pages may send mutations: the dashboard's configured URL (BETTER_AUTH_URL,
 * required in production). Without it (development) the request's own origin, as Better Auth
 * does.
 */
export function trustedOrigins(request: { url: string }): string[] {
  const configured = env().BETTER_AUTH_URL;
  return configured ? originsOf(configured) : [new URL(request.url).origin];
}

/** True when the dashboard is served over https (HSTS, Secure cookies). */
export function servedOverHttps(): boolean {
  return env().BETTER_AUTH_URL?.startsWith('https://') ?? false;
}

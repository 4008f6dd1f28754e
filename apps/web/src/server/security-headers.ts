/**
 * The rules proxy.ts applies to every request before a page or a route runs: which mutations
 * are refused (cross-site, not JSON) and the headers every answer gets. Pure functions of the
 * request, tested over HTTP by the security suite (apps/web/test/security.test.ts).
 */

import { IMPORT_CONTENT_TYPES } from '@beton/people/import/policy';

/** Methods that change nothing; everything else is a mutation. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Where a mutation always needs our own page's Origin and JSON, cookie or not (sign-in included). */
const ALWAYS_CHECKED = ['/api/trpc', '/api/auth', '/api/imports'];
/**
 * Routes that take a file as the body instead of JSON, with the content types they accept (HR's
 * employee upload: CSV or XLSX). Still only from our own Origin: a page of another site can send
 * text/csv (a "simple" request) but never with our Origin header, so the CSRF check holds.
 */
const FILE_UPLOADS: Record<string, readonly string[]> = {
  '/api/imports': Object.values(IMPORT_CONTENT_TYPES),
};
/** The session cookie's name starts with this (auth.ts `cookiePrefix`). */
const COOKIE_PREFIX = 'beton.';

export interface Refusal {
  status: 403 | 415;
  code: string;
  message: string;
  /** The request carried Beton's session cookie (for the log). */ withSessionCookie: boolean;
}

/**
 * A mutation that could act with a user's session (any request carrying Beton's cookie, and
 * every tRPC and auth call) must come from one of our own pages: an `Origin` that is the
 * dashboard's, and a JSON body, which a page of another site cannot send without a CORS
 * preflight that it never gets. A form post (urlencoded, multipart, text/plain) or a request
 * with a foreign or missing Origin is refused before the router runs. A server-to-server POST
 * without cookies to another route (a provider's signed webhook) is not concerned.
 */
export function refuseMutation(req: { method: string; url: string; headers: Headers }, trusted: string[]): Refusal | null {
  if (SAFE_METHODS.has(req.method)) return null;
  const path = new URL(req.url).pathname;
  const withCookie = (req.headers.get('cookie') ?? '').split(';').some((c) => c.trim().startsWith(COOKIE_PREFIX));
  if (!withCookie && !ALWAYS_CHECKED.some((p) => path === p || path.startsWith(`${p}/`))) return null;
  const origin = req.headers.get('origin');
  if (!origin || !trusted.includes(origin)) {
    return {
      status: 403,
      code: 'FORBIDDEN',
      message: "Cross-site request refused: changes are accepted only from this dashboard's own pages",
      withSessionCookie: withCookie,
    };
  }
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const upload = FILE_UPLOADS[path];
  if (upload) {
    if (!upload.includes(type))
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: `Upload a CSV or an XLSX file (${upload.join(' or ')})`, withSessionCookie: withCookie };
    return null;
  }
  if (type !== 'application/json') {
    return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Changes are accepted only as application/json', withSessionCookie: withCookie };
  }
  return null;
}

/**
 * The pages' Content-Security-Policy: scripts only with this response's nonce (Next puts it on
 * its own scripts; 'strict-dynamic' lets them load their chunks), styles from our own origin or
 * with the nonce, nothing from elsewhere, no plugins, no <base>, forms only to ourselves, never
 * framed. API answers get a policy that allows nothing.
 */
export function contentSecurityPolicy(kind: 'page' | 'api', nonce: string, https: boolean): string {
  if (kind === 'api') return "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(https ? ['upgrade-insecure-requests'] : []),
  ].join('; ');
}

/** Two years, subdomains included: sent only when the dashboard is served over https. */
export const HSTS = 'max-age=63072000; includeSubDomains';

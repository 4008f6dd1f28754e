import { NextResponse, type NextRequest } from 'next/server';
import { logger } from './server/logger.ts';
import { servedOverHttps, trustedOrigins } from './server/origins.ts';
import { requestId } from './server/request-meta.ts';
import { contentSecurityPolicy, HSTS, refuseMutation } from './server/security-headers.ts';

/**
 * Runs before every page and route (Next's proxy, the successor of middleware): refuses a
 * mutation that does not come from our own pages, and sets the per-request Content-Security-
 * Policy with a fresh nonce (Next reads it from the request's CSP header and puts it on its
 * scripts; every page renders per request) and HSTS over https. The static headers (nosniff,
 * Referrer-Policy, X-Frame-Options, no-store on API answers) are in next.config.ts.
 */
export function proxy(request: NextRequest): NextResponse {
  const refused = refuseMutation(request, trustedOrigins(request));
  if (refused) {
    const { status, code, message, withSessionCookie } = refused;
    // A security event worth a line: who tried what from where (never the body or the cookie's value).
    logger().warn(
      {
        requestId: requestId(request.headers),
        method: request.method,
        path: request.nextUrl.pathname,
        status,
        origin: request.headers.get('origin'),
        contentType: request.headers.get('content-type'),
        withSessionCookie,
      },
      'mutation refused: not from our own pages',
    );
    const body = request.nextUrl.pathname.startsWith('/api/trpc')
      ? { error: { json: { message, code: status === 403 ? -32003 : -32015, data: { code, httpStatus: status } } } } // as tRPC's client reads an error (superjson)
      : { error: { code, message } };
    return NextResponse.json(body, { status, headers: { 'cache-control': 'no-store' } });
  }
  const https = servedOverHttps();
  const api = request.nextUrl.pathname.startsWith('/api/');
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64');
  const csp = contentSecurityPolicy(api ? 'api' : 'page', nonce, https);
  const requestHeaders = new Headers(request.headers);
  if (!api) {
    requestHeaders.set('x-nonce', nonce);
    requestHeaders.set('content-security-policy', csp);
  }
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set('content-security-policy', csp);
  if (https) response.headers.set('strict-transport-security', HSTS);
  return response;
}

export const config = {
  // Everything but Next's own static files (their headers: next.config.ts).
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};

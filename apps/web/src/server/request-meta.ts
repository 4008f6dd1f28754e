/**
 * What a request's own headers cannot be trusted to say: who sent it (the client's address)
 * and its request id.
 *
 * `next start` fills X-Forwarded-For from the socket only when the request has none, so a
 * client that sends its own value chooses the address Better Auth's per-address sign-in limit
 * counts. Route handlers never see the socket. So the web server's own HTTP servers are hooked
 * once, at start-up (instrumentation.ts → installRequestMeta): for every request, before Next
 * sees it, the client's address is worked out from the socket — or, when the socket is a
 * configured trusted proxy (TRUSTED_PROXIES), from the X-Forwarded-For entries those proxies
 * added (`proxy-addr`, Express's implementation) — and written over the headers
 * `x-beton-client-address` and `x-forwarded-for`; a fresh request id goes into `x-request-id`
 * (request and response). A per-process secret in `x-beton-request-proof` shows a route that
 * the hook, not the client, wrote them: a request that reached the server before the hook was
 * installed (the first moments after start) carries whatever the client sent, and is treated
 * as having no known address.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';

export const CLIENT_ADDRESS_HEADER = 'x-beton-client-address';
export const REQUEST_ID_HEADER = 'x-request-id';
const PROOF_HEADER = 'x-beton-request-proof';

const state = globalThis as unknown as { betonRequestProof?: string };

/** Installs the hook on every HTTP server of this process (once). `trusted`: TRUSTED_PROXIES. */
export function installRequestMeta(trusted: string[]): void {
  if (state.betonRequestProof) return;
  const proof = randomBytes(24).toString('base64url');
  const trust = proxyaddr.compile(trusted);
  // eslint-disable-next-line @typescript-eslint/unbound-method -- wrapped below and called with the server as `this`
  const emit = http.Server.prototype.emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  http.Server.prototype.emit = function emitWithRequestMeta(this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === 'request') {
      const [req, res] = args as [IncomingMessage, ServerResponse];
      const address = normalise(proxyaddr(req, trust));
      const id = randomUUID();
      req.headers[CLIENT_ADDRESS_HEADER] = address;
      req.headers['x-forwarded-for'] = address;
      req.headers[REQUEST_ID_HEADER] = id;
      req.headers[PROOF_HEADER] = proof;
      res.setHeader(REQUEST_ID_HEADER, id);
    }
    return emit.call(this, event, ...args);
  } as typeof http.Server.prototype.emit;
  state.betonRequestProof = proof;
}

/** `::ffff:10.0.0.5` (an IPv4 client of a dual-stack socket) → `10.0.0.5`. */
function normalise(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

function written(headers: Headers): boolean {
  const proof = state.betonRequestProof;
  const given = headers.get(PROOF_HEADER);
  if (!proof || !given || given.length !== proof.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(proof));
}

/** The client's address as the hook found it, or null (a request the hook did not see). */
export function clientAddress(headers: Headers): string | null {
  return written(headers) ? headers.get(CLIENT_ADDRESS_HEADER) : null;
}

/** The request's id (the one in the response's `x-request-id`); a fresh one when the hook did not see it. */
export function requestId(headers: Headers | Record<string, string | string[] | undefined>): string {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : ([headers[name]].flat()[0] ?? null));
  const proof = state.betonRequestProof;
  const id = get(REQUEST_ID_HEADER);
  if (proof && get(PROOF_HEADER) === proof && id) return id;
  return randomUUID();
}

/** A copy of the headers without the hook's own (never forwarded, never logged). */
export function withoutRequestMeta(headers: Headers): Headers {
  const copy = new Headers(headers);
  copy.delete(PROOF_HEADER);
  return copy;
}

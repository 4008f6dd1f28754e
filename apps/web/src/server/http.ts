/**
 * Answers of the web app's own route handlers: errors as `{ error: { code, message, requestId } }`
 * with the request id also in `x-request-id`, and one wrapper that turns anything unexpected
 * into a generic 500 (details in the log under the same id, never in the answer).
 */
import { logger } from './logger.ts';
import { requestId, REQUEST_ID_HEADER } from './request-meta.ts';

export function jsonError(
  req: Request,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
  details: Record<string, unknown> = {},
): Response {
  const id = requestId(req.headers);
  return Response.json(
    { error: { code, message, requestId: id, ...details } },
    { status, headers: { [REQUEST_ID_HEADER]: id, 'cache-control': 'no-store', ...headers } },
  );
}

/** The answer to an unexpected error: a generic message and the request id; the error goes to the log with that id. */
export function internalError(req: Request, error: unknown, context: Record<string, unknown> = {}): Response {
  const id = requestId(req.headers);
  logger().error({ requestId: id, method: req.method, path: new URL(req.url).pathname, ...context, err: error }, 'request failed');
  return Response.json(
    { error: { code: 'INTERNAL_SERVER_ERROR', message: `Something went wrong on our side. If it persists, quote request id ${id}.`, requestId: id } },
    { status: 500, headers: { [REQUEST_ID_HEADER]: id, 'cache-control': 'no-store' } },
  );
}

/** Wraps a route handler: an exception becomes `internalError`. */
export function handled<A extends unknown[]>(fn: (req: Request, ...rest: A) => Promise<Response>): (req: Request, ...rest: A) => Promise<Response> {
  return async (req, ...rest) => {
    try {
      return await fn(req, ...rest);
    } catch (error) {
      return internalError(req, error);
    }
  };
}

/**
 * A request's body, or null once it passes `max` bytes (the rest is not read: a missing or
 * lying Content-Length gets no more through). Used by the routes that take a raw body.
 */
export async function readBodyCapped(req: Request, max: number): Promise<Buffer | null> {
  const reader = req.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Small helpers shared by the simulators (node:http only, no framework).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Thrown by {@link readBody} when the body exceeds the byte limit. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

/**
 * Reads the whole request body. Rejects with {@link BodyTooLargeError} as soon as more than
 * `limit` bytes have arrived (or Content-Length announces more), without buffering the rest.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Too large: the rest is read and discarded before the rejection, so the answer (413)
    // reaches a client that is still sending instead of a reset connection.
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      req.once('end', () => reject(new BodyTooLargeError(limit)));
      req.once('error', () => reject(new BodyTooLargeError(limit)));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        req.once('end', () => reject(new BodyTooLargeError(limit)));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, contentType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
    ...headers,
  });
  res.end(body);
}

/** Parses a JSON body; returns `undefined` for an empty body, throws SyntaxError on bad JSON. */
export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  return JSON.parse(buf.toString('utf8')) as unknown;
}

/** Returns the bearer token of the request, or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m?.[1]?.trim();
}

/** Seeded PRNG (mulberry32): deterministic sequences in [0, 1) for latency and faults. */
export function makeRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Listening {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Creates a server running `handler` for every request and listens on host:port (0 = free
 * port). Unhandled handler errors become a 500. `close()` stops accepting, destroys every
 * open socket (idle keep-alive ones included) and resolves when the server is closed.
 */
export async function listen(handler: Handler, port: number, host: string): Promise<Listening> {
  const server = createServer((req, res) => {
    handler(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, { errors: [{ field: null, message: 'Internal Server Error', help: null }] });
      } else {
        res.destroy();
      }
      if (!(err instanceof Error && err.name === 'AbortError')) {
        console.error('[simulator] handler error', err);
      }
    });
  });
  // Keep-alive sockets must not keep the process (or a test) alive after close().
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    port: addr.port,
    url: `http://${urlHost}:${addr.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Parses `--name value` / `--name=value` / `--flag` command-line arguments. */
export function parseArgs(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === undefined || !arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) {
      out.set(arg.slice(2, eq), arg.slice(eq + 1));
      continue;
    }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      out.set(arg.slice(2), next);
      i++;
    } else {
      out.set(arg.slice(2), 'true');
    }
  }
  return out;
}

/** Number from a flag, else an env variable, else undefined; throws on garbage. */
export function numberOption(args: Map<string, string>, flag: string, env: string | readonly string[]): number | undefined {
  const envs = typeof env === 'string' ? [env] : env;
  let raw = args.get(flag);
  for (const e of envs) raw ??= process.env[e];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`--${flag} / ${envs.join(' / ')}: not a number: ${raw}`);
  return n;
}

export function stringOption(args: Map<string, string>, flag: string, env: string | readonly string[]): string | undefined {
  const envs = typeof env === 'string' ? [env] : env;
  let raw = args.get(flag);
  for (const e of envs) raw ??= process.env[e];
  return raw === '' ? undefined : raw;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

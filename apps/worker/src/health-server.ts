/**
 * Small HTTP server every worker process runs on HEALTH_PORT (default 9464):
 *   GET /healthz  liveness: 200 while isLive() (the worker: its job runner takes jobs and the
 *                 event loop is not blocked); 503 with the problems otherwise. A blocked event
 *                 loop cannot answer at all: the probe's timeout is the failure.
 *   GET /readyz   readiness: 200 while isReady() (the worker: live, its database answers, no
 *                 shutdown started); 503 with the problems otherwise
 *   GET /metrics  Prometheus exposition text from the given registry
 * Kubernetes probes (deploy/k8s) and compose healthchecks hit these paths.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Anything that renders Prometheus text: a prom-client Registry or createMetrics()'s result. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface HealthServerOptions {
  port: number;
  /** Default '0.0.0.0' (probes come from the kubelet / other containers). */
  host?: string;
  metrics: MetricsSource;
  /** false once graceful shutdown started (or before the worker is running); may say why. */
  isReady: () => Check;
  /** Optional liveness check; default always live. */
  isLive?: () => Check;
}

export interface HealthServer {
  /** e.g. http://127.0.0.1:9464 */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export const DEFAULT_HEALTH_PORT = 9464;

/** A probe's answer: a boolean, or the answer with the problems that make it false. */
export type Check = boolean | { ok: boolean; problems?: string[] };

const answer = (check: Check) => (typeof check === 'boolean' ? { ok: check, problems: [] as string[] } : { ok: check.ok, problems: check.problems ?? [] });

function send(res: ServerResponse, status: number, contentType: string, body: string, head: boolean): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(head ? undefined : body);
}

function json(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), head);
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const host = options.host ?? '0.0.0.0';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    if (method !== 'GET' && !head) {
      res.setHeader('allow', 'GET, HEAD');
      json(res, 405, { error: 'method not allowed' }, false);
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    switch (path) {
      case '/healthz': {
        const live = answer(options.isLive ? options.isLive() : true);
        json(res, live.ok ? 200 : 503, { status: live.ok ? 'ok' : 'unhealthy', ...(live.problems.length ? { problems: live.problems } : {}) }, head);
        return;
      }
      case '/readyz': {
        const ready = answer(options.isReady());
        json(res, ready.ok ? 200 : 503, { status: ready.ok ? 'ready' : 'not_ready', ...(ready.problems.length ? { problems: ready.problems } : {}) }, head);
        return;
      }
      case '/metrics': {
        const text = await options.metrics.metrics();
        send(res, 200, options.metrics.contentType, text, head);
        return;
      }
      default:
        json(res, 404, { error: 'not found' }, head);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        json(res, 500, { error: error instanceof Error ? error.message : String(error) }, false);
      } else {
        res.destroy();
      }
    });
  });
  // Probes must not keep the process alive during shutdown.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

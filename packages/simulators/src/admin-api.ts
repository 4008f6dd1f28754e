/**
 * The simulator's own control API (no SendGrid page: tests, drills and people drive the
 * simulator with it): GET /_admin/messages (?to=, ?customArg=key:value, ?since=, ?limit=),
 * /_admin/stats, GET|POST /_admin/faults, GET|POST /_admin/webhook, /_admin/suppressions,
 * POST /_admin/reset.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { WebhookSettings } from './event-webhook.ts';
import { parseJson, readBody, sendJson } from './http-util.ts';
import type { FaultState, MessageFilter, ProviderFaults, ProviderStats, StoredMessage, StoredMessageJson } from './provider-types.ts';

export const FaultsSchema = z
  .object({
    unavailableForMs: z.number().min(0).optional(),
    dropAckFraction: z.number().min(0).max(1).optional(),
    dropNextAcks: z.number().int().min(0).optional(),
    extraLatencyMs: z.number().min(0).optional(),
    ratePerSecond: z.number().positive().optional(),
    keyRevoked: z.boolean().optional(),
    credits: z.number().min(0).optional(),
    activityDelayMs: z.number().min(0).optional(),
    activityUnavailableForMs: z.number().min(0).optional(),
  })
  .strict();

export const WebhookSchema = z
  .object({
    url: z.string().url().nullable().optional(),
    batchMs: z.number().int().positive().optional(),
    duplicateFraction: z.number().min(0).max(1).optional(),
    shuffle: z.boolean().optional(),
    lagMs: z.number().min(0).optional(),
    unreachableForMs: z.number().min(0).optional(),
  })
  .strict();

export function filterFromQuery(url: URL): MessageFilter | string {
  const f: MessageFilter = {};
  const to = url.searchParams.get('to');
  if (to) f.to = to;
  const args = url.searchParams.getAll('customArg');
  if (args.length > 0) {
    f.customArgs = {};
    for (const a of args) {
      const i = a.indexOf(':');
      if (i <= 0) return `customArg must be key:value, got ${JSON.stringify(a)}`;
      f.customArgs[a.slice(0, i)] = a.slice(i + 1);
    }
  }
  const since = url.searchParams.get('since');
  if (since) {
    const d = new Date(since);
    if (Number.isNaN(d.getTime())) return 'since must be an ISO date';
    f.since = d;
  }
  return f;
}

export function createAdminApi(deps: {
  messages(filter: MessageFilter): StoredMessage[];
  toJson(m: StoredMessage): StoredMessageJson;
  stats(): ProviderStats;
  faultState(): FaultState;
  setFaults(f: ProviderFaults): FaultState;
  webhook(): unknown;
  configureWebhook(settings: Partial<WebhookSettings> & { unreachableForMs?: number }): WebhookSettings;
  suppressed(): string[];
  reset(): void;
}): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  return async function admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (path === '/_admin/messages' && req.method === 'GET') {
      const f = filterFromQuery(url);
      if (typeof f === 'string') return sendJson(res, 400, { error: f });
      const limit = Number(url.searchParams.get('limit') ?? Infinity);
      let list = deps.messages(f);
      if (Number.isFinite(limit) && limit >= 0) list = list.slice(-limit);
      return sendJson(res, 200, { count: list.length, messages: list.map((m) => deps.toJson(m)) });
    }
    if (path === '/_admin/stats' && req.method === 'GET') return sendJson(res, 200, deps.stats());
    if (path === '/_admin/faults' && req.method === 'GET') return sendJson(res, 200, deps.faultState());
    if (path === '/_admin/faults' && req.method === 'POST') {
      let body: unknown;
      try {
        body = parseJson(await readBody(req, 1 << 20)) ?? {};
      } catch {
        return sendJson(res, 400, { error: 'invalid JSON' });
      }
      const parsed = FaultsSchema.safeParse(body);
      if (!parsed.success) return sendJson(res, 400, { error: 'invalid faults', issues: parsed.error.issues });
      return sendJson(res, 200, deps.setFaults(parsed.data));
    }
    if (path === '/_admin/webhook' && req.method === 'GET') return sendJson(res, 200, deps.webhook());
    if (path === '/_admin/webhook' && req.method === 'POST') {
      let body: unknown;
      try {
        body = parseJson(await readBody(req, 1 << 20)) ?? {};
      } catch {
        return sendJson(res, 400, { error: 'invalid JSON' });
      }
      const parsed = WebhookSchema.safeParse(body);
      if (!parsed.success) return sendJson(res, 400, { error: 'invalid webhook settings', issues: parsed.error.issues });
      const { url, ...rest } = parsed.data;
      return sendJson(res, 200, deps.configureWebhook({ ...rest, ...(url === undefined ? {} : { url }) }));
    }
    if (path === '/_admin/suppressions' && req.method === 'GET') return sendJson(res, 200, { suppressed: deps.suppressed() });
    if (path === '/_admin/reset' && req.method === 'POST') {
      deps.reset();
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'not found' });
  };
}

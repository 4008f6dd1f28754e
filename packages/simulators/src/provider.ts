/**
 * A SendGrid-compatible email provider simulator (v3 Mail Send + Email Activity subset), for
 * tests, drills and local runs of Beton. Point the real `@sendgrid/mail` client at it:
 *
 *   const client = new Client(); client.setApiKey('SG.beton-dev');
 *   client.setDefaultRequest('baseUrl', sim.url);   // after setApiKey, which resets baseUrl
 *   mail.setClient(client);
 *
 * HTTP surface:
 *   POST /v3/mail/send          202 + X-Message-Id | 400 | 401 | 413 | 429 | 503 (SendGrid bodies)
 *   GET  /v3/messages           Email Activity: ?limit=10&query=unique_args['k']="v" (see activity-query.ts)
 *   GET  /inbox                 HTML inbox; /inbox/<id>; /inbox/<id>/attachments/<n> (the PDF)
 *   GET  /_admin/messages       ?to=a@b.c&customArg=key:value (repeatable)&limit=N  -> {messages:[...]}
 *   GET  /_admin/stats          -> ProviderStats
 *   GET  /_admin/faults         -> FaultState;   POST /_admin/faults  body: ProviderFaults
 *   POST /_admin/reset          clears messages, stats and faults (rate back to the start value)
 *
 * Order of checks on mail send: 503 (unavailable window) → 401 → 413 → 429 → 400 (JSON,
 * validation) → latency → store → 202 (or the lost ack: socket destroyed, message stored).
 * A message is stored only when it is accepted, and once accepted it is stored even if the
 * client went away during the latency (as a real provider would send it).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { parseActivityQuery, QuerySyntaxError, type ActivityRecord, type QueryTarget } from './activity-query.ts';
import {
  BodyTooLargeError,
  bearerToken,
  escapeHtml,
  listen,
  makeRandom,
  parseJson,
  readBody,
  sendJson,
  sendText,
} from './http-util.ts';
import {
  DEFAULT_REJECT_DOMAINS,
  validateMailSend,
  type AddressRule,
  type EmailAddress,
  type SendGridError,
  type ValidMail,
} from './sendgrid-validate.ts';

export interface ProviderSimulatorOptions {
  /** TCP port to listen on. Default 0 = any free port (read `url`/`port` afterwards). */
  port?: number;
  /** Interface to bind. Default '127.0.0.1'. */
  host?: string;
  /** The one accepted API key (`Authorization: Bearer <apiKey>`). Default 'SG.beton-dev'. */
  apiKey?: string;
  /**
   * Mail-send requests accepted per account (API key) per fixed 1-second window
   * (`floor(now / 1000)`); requests above it get 429. Every authenticated request that got
   * past the 413 check counts, including those answered 400 or 429. Default 40.
   */
  ratePerSecond?: number;
  /** Base latency of a mail-send answer (202 and 400) in ms. Default 1200. */
  latencyMs?: number;
  /**
   * Latency varies uniformly within ±latencySpreadMs around latencyMs (clamped at 0), drawn
   * from a seeded PRNG (see `seed`), so runs are repeatable-ish. Default 200.
   */
  latencySpreadMs?: number;
  /** Largest accepted request body; above it 413. Default 30 MiB (SendGrid's 30 MB limit). */
  maxBodyBytes?: number;
  /**
   * Recipient domains (and their subdomains) rejected with 400 "Does not contain a valid
   * address." although syntactically valid. Real SendGrid would accept and bounce later; the
   * simulator answers synchronously so the permanent-failure path (R6) is testable.
   * Default ['invalid.example'].
   */
  rejectDomains?: string[];
  /** Full recipient addresses rejected the same way (case-insensitive). Default []. */
  rejectAddresses?: string[];
  /** PRNG seed for latency spread and dropAckFraction. Default 1. */
  seed?: number;
  /**
   * Keep attachment bytes of stored messages (size and sha256 are always kept). Turn off for
   * full-scale runs (50,000 slips). Default true.
   */
  storeAttachmentBytes?: boolean;
  /**
   * Delay before an accepted message shows up in the Email Activity API (`GET /v3/messages`);
   * real SendGrid lags by seconds to minutes. Default 0.
   */
  activityDelayMs?: number;
  /** Logger for admin actions (fault changes, resets). Default: silent. */
  log?: (line: string) => void;
}

/** Runtime faults; every field is optional and only the given ones change. */
export interface ProviderFaults {
  /** Answer 503 to every mail send for the next N ms (0 ends the window now). */
  unavailableForMs?: number;
  /** Fraction 0..1 of accepted requests whose ack is lost: stored, then the socket is destroyed. */
  dropAckFraction?: number;
  /** The next N accepted requests lose their ack (deterministic counterpart of dropAckFraction). */
  dropNextAcks?: number;
  /** Extra latency added to every mail-send answer (202/400), in ms. */
  extraLatencyMs?: number;
  /** Change the per-second rate limit. */
  ratePerSecond?: number;
}

export interface FaultState {
  unavailableUntil: string | null;
  unavailableRemainingMs: number;
  dropAckFraction: number;
  dropNextAcks: number;
  extraLatencyMs: number;
  ratePerSecond: number;
}

export interface StoredAttachment {
  filename: string;
  type: string;
  disposition: string | undefined;
  contentId: string | undefined;
  size: number;
  sha256: string;
  /** Decoded bytes; null when `storeAttachmentBytes` is false. */
  content: Buffer | null;
}

export interface StoredPersonalization {
  to: EmailAddress[];
  cc: EmailAddress[];
  bcc: EmailAddress[];
  subject: string | undefined;
  /** The personalization's custom_args merged over the message-level ones. */
  customArgs: Record<string, string>;
  /** Everything else the personalization carried (substitutions, headers, send_at…). */
  extra: Record<string, unknown>;
}

export interface StoredMessage {
  /** The X-Message-Id returned with the 202. */
  id: string;
  /** Sequence number (1, 2, …) in acceptance order. */
  seq: number;
  receivedAt: Date;
  acceptedAt: Date;
  from: EmailAddress;
  /** Message-level subject, else the first personalization's. */
  subject: string;
  /** Every `to` address over all personalizations, as sent. */
  to: string[];
  /** Message-level custom_args merged with personalizations[0]'s (the usual one-personalization case). */
  customArgs: Record<string, string>;
  personalizations: StoredPersonalization[];
  content: Array<{ type: string; value: string }>;
  templateId: string | undefined;
  attachments: StoredAttachment[];
  /** The request body as received, with attachment contents replaced by their size. */
  body: Record<string, unknown>;
}

/** JSON form of a stored message (admin API): dates as ISO strings, attachments without bytes. */
export interface StoredMessageJson extends Omit<StoredMessage, 'receivedAt' | 'acceptedAt' | 'attachments'> {
  receivedAt: string;
  acceptedAt: string;
  attachments: Array<Omit<StoredAttachment, 'content'> & { url: string; stored: boolean }>;
}

export interface MessageFilter {
  /** Matches any `to` recipient (case-insensitive). */
  to?: string;
  /** Every pair must match the custom args of at least one personalization (merged with message-level). */
  customArgs?: Record<string, string>;
  /** Only messages accepted at or after this time. */
  since?: Date;
}

export interface ProviderStats {
  /** Mail-send requests received (any outcome). */
  requests: number;
  /** Mail-send responses by HTTP status, e.g. { "202": 10, "429": 2 }. Lost acks are not responses. */
  responses: Record<string, number>;
  /** Messages accepted and stored (includes lost acks). */
  accepted: number;
  /** Accepted requests whose answer was deliberately lost (socket destroyed). */
  droppedAcks: number;
  /** Mail-send requests in flight now (arrival → response finished or socket closed). */
  inFlight: number;
  /** Highest `inFlight` seen. */
  maxInFlight: number;
  /** Most mail-send requests arriving within one fixed 1-second window (the limiter's window). */
  maxRequestsPerSecond: number;
  /** Most accepted (stored) messages that arrived within one fixed 1-second window (≤ the rate limit). */
  maxAcceptedPerSecond: number;
  /** Email Activity API queries answered. */
  activityQueries: number;
}

export interface ProviderSimulator {
  /** Base URL, e.g. http://127.0.0.1:41234 (use as the client's baseUrl). */
  readonly url: string;
  readonly port: number;
  readonly apiKey: string;
  /** Stored messages matching the filter, oldest first. */
  messages(filter?: MessageFilter): StoredMessage[];
  /** One stored message by X-Message-Id. */
  message(id: string): StoredMessage | undefined;
  stats(): ProviderStats;
  /** Apply faults (only given fields change). Same as POST /_admin/faults. */
  setFaults(faults: ProviderFaults): FaultState;
  faults(): FaultState;
  /** Shorthands for setFaults. */
  unavailableFor(ms: number): void;
  setDropAckFraction(fraction: number): void;
  dropNextAcks(n: number): void;
  setExtraLatency(ms: number): void;
  setRatePerSecond(n: number): void;
  /** Clear messages, stats and faults; rate back to the start value. Same as POST /_admin/reset. */
  reset(): void;
  /** Stop the server: pending requests are cut, sockets destroyed, timers cleared. Idempotent. */
  close(): Promise<void>;
}

const FaultsSchema = z
  .object({
    unavailableForMs: z.number().min(0).optional(),
    dropAckFraction: z.number().min(0).max(1).optional(),
    dropNextAcks: z.number().int().min(0).optional(),
    extraLatencyMs: z.number().min(0).optional(),
    ratePerSecond: z.number().positive().optional(),
  })
  .strict();

const sgError = (message: string, field: string | null = null): { errors: SendGridError[] } => ({
  errors: [{ message, field, help: null }],
});

function newMessageId(): string {
  return randomBytes(16).toString('base64url'); // 22 characters, like SendGrid's
}

function addresses(v: unknown): EmailAddress[] {
  if (!Array.isArray(v)) return [];
  return v.map((a: { email: string; name?: unknown }) =>
    typeof a.name === 'string' ? { email: a.email, name: a.name } : { email: a.email },
  );
}

export async function startProviderSimulator(opts: ProviderSimulatorOptions = {}): Promise<ProviderSimulator> {
  const apiKey = opts.apiKey ?? 'SG.beton-dev';
  const initialRate = opts.ratePerSecond ?? 40;
  const latencyMs = opts.latencyMs ?? 1200;
  const spreadMs = opts.latencySpreadMs ?? 200;
  const maxBodyBytes = opts.maxBodyBytes ?? 30 * 1024 * 1024;
  const storeBytes = opts.storeAttachmentBytes ?? true;
  const activityDelayMs = opts.activityDelayMs ?? 0;
  const seed = opts.seed ?? 1;
  const log = opts.log ?? (() => {});
  const rule: AddressRule = {
    rejectDomains: (opts.rejectDomains ?? [...DEFAULT_REJECT_DOMAINS]).map((d) => d.toLowerCase()),
    rejectAddresses: (opts.rejectAddresses ?? []).map((a) => a.toLowerCase()),
  };

  const abort = new AbortController();
  let random = makeRandom(seed);

  // ---- state (reset() restores it) ----
  let store: StoredMessage[] = [];
  let byId = new Map<string, StoredMessage>();
  let seq = 0;
  let faults = { unavailableUntil: 0, dropAckFraction: 0, dropNextAcks: 0, extraLatencyMs: 0, ratePerSecond: initialRate };
  let accounts = new Map<string, { window: number; count: number }>();
  const freshStats = () => ({
    requests: 0,
    responses: {} as Record<string, number>,
    accepted: 0,
    droppedAcks: 0,
    maxInFlight: 0,
    maxRequestsPerSecond: 0,
    maxAcceptedPerSecond: 0,
    activityQueries: 0,
    reqWindow: -1,
    reqWindowCount: 0,
    accWindows: new Map<number, number>(),
  });
  let st = freshStats();
  let inFlight = 0;

  function faultState(): FaultState {
    const now = Date.now();
    return {
      unavailableUntil: faults.unavailableUntil > now ? new Date(faults.unavailableUntil).toISOString() : null,
      unavailableRemainingMs: Math.max(0, faults.unavailableUntil - now),
      dropAckFraction: faults.dropAckFraction,
      dropNextAcks: faults.dropNextAcks,
      extraLatencyMs: faults.extraLatencyMs,
      ratePerSecond: faults.ratePerSecond,
    };
  }

  function setFaults(f: ProviderFaults): FaultState {
    const parsed = FaultsSchema.parse(f);
    if (parsed.unavailableForMs !== undefined) faults.unavailableUntil = Date.now() + parsed.unavailableForMs;
    if (parsed.dropAckFraction !== undefined) faults.dropAckFraction = parsed.dropAckFraction;
    if (parsed.dropNextAcks !== undefined) faults.dropNextAcks = parsed.dropNextAcks;
    if (parsed.extraLatencyMs !== undefined) faults.extraLatencyMs = parsed.extraLatencyMs;
    if (parsed.ratePerSecond !== undefined) faults.ratePerSecond = parsed.ratePerSecond;
    log(`[provider-sim] faults ${JSON.stringify(parsed)}`);
    return faultState();
  }

  function reset(): void {
    store = [];
    byId = new Map();
    seq = 0;
    faults = { unavailableUntil: 0, dropAckFraction: 0, dropNextAcks: 0, extraLatencyMs: 0, ratePerSecond: initialRate };
    accounts = new Map();
    st = freshStats();
    st.maxInFlight = inFlight;
    random = makeRandom(seed);
    log('[provider-sim] reset');
  }

  function count(status: number): void {
    st.responses[status] = (st.responses[status] ?? 0) + 1;
  }

  function matches(m: StoredMessage, f: MessageFilter): boolean {
    if (f.since && m.acceptedAt < f.since) return false;
    if (f.to !== undefined) {
      const to = f.to.toLowerCase();
      if (!m.to.some((t) => t.toLowerCase() === to)) return false;
    }
    if (f.customArgs) {
      const want = Object.entries(f.customArgs);
      if (!m.personalizations.some((p) => want.every(([k, v]) => p.customArgs[k] === v))) return false;
    }
    return true;
  }

  function messages(filter: MessageFilter = {}): StoredMessage[] {
    return store.filter((m) => matches(m, filter));
  }

  function toJson(m: StoredMessage): StoredMessageJson {
    return {
      ...m,
      receivedAt: m.receivedAt.toISOString(),
      acceptedAt: m.acceptedAt.toISOString(),
      attachments: m.attachments.map(({ content, ...a }, n) => ({
        ...a,
        stored: content !== null,
        url: `/inbox/${encodeURIComponent(m.id)}/attachments/${n}`,
      })),
    };
  }

  function storeMessage(mail: ValidMail, receivedAt: Date): StoredMessage {
    const id = newMessageId();
    const msgArgs = mail.custom_args ?? {};
    const personalizations: StoredPersonalization[] = mail.personalizations.map((p) => {
      const { to, cc, bcc, subject, custom_args, ...extra } = p;
      return {
        to: addresses(to),
        cc: addresses(cc),
        bcc: addresses(bcc),
        subject,
        customArgs: { ...msgArgs, ...(custom_args ?? {}) },
        extra,
      };
    });
    const attachments: StoredAttachment[] = (mail.attachments ?? []).map((a) => {
      const bytes = Buffer.from(a.content, 'base64');
      return {
        filename: a.filename,
        type: a.type ?? 'application/octet-stream',
        disposition: a.disposition,
        contentId: a.content_id,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        content: storeBytes ? bytes : null,
      };
    });
    const body: Record<string, unknown> = { ...mail };
    if (mail.attachments) {
      body['attachments'] = mail.attachments.map((a) => ({ ...a, content: `<${Buffer.byteLength(a.content)} base64 characters>` }));
    }
    const first = personalizations[0];
    const msg: StoredMessage = {
      id,
      seq: ++seq,
      receivedAt,
      acceptedAt: new Date(),
      from: typeof mail.from.name === 'string' ? { email: mail.from.email, name: mail.from.name } : { email: mail.from.email },
      subject: mail.subject ?? first?.subject ?? '',
      to: personalizations.flatMap((p) => p.to.map((a) => a.email)),
      customArgs: first?.customArgs ?? { ...msgArgs },
      personalizations,
      content: mail.content ?? [],
      templateId: mail.template_id,
      attachments,
      body,
    };
    store.push(msg);
    byId.set(id, msg);
    st.accepted++;
    // bucket by arrival second (the limiter's window); arrivals finish out of order, so keep a few windows
    const w = Math.floor(receivedAt.getTime() / 1000);
    const n = (st.accWindows.get(w) ?? 0) + 1;
    st.accWindows.set(w, n);
    st.maxAcceptedPerSecond = Math.max(st.maxAcceptedPerSecond, n);
    if (st.accWindows.size > 64) for (const k of st.accWindows.keys()) if (k < w - 30) st.accWindows.delete(k);
    return msg;
  }

  // ---- mail send ----
  async function mailSend(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = new Date();
    st.requests++;
    inFlight++;
    st.maxInFlight = Math.max(st.maxInFlight, inFlight);
    // Leave "in flight" as soon as the answer is written (or the socket destroyed), not on
    // the later 'close' event, so a client that got its answer sees a consistent count.
    let counted = true;
    const leave = (): void => {
      if (counted) {
        counted = false;
        inFlight--;
      }
    };
    res.once('close', leave);
    const rw = Math.floor(receivedAt.getTime() / 1000);
    if (rw !== st.reqWindow) {
      st.reqWindow = rw;
      st.reqWindowCount = 0;
    }
    st.reqWindowCount++;
    st.maxRequestsPerSecond = Math.max(st.maxRequestsPerSecond, st.reqWindowCount);

    const reply = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      count(status);
      leave();
      if (body === undefined) {
        if (res.headersSent || res.destroyed) return;
        res.writeHead(status, { 'Content-Length': '0', ...headers });
        res.end();
      } else {
        sendJson(res, status, body, headers);
      }
    };

    if (req.method !== 'POST') return reply(405, sgError('method not allowed'));
    if (Date.now() < faults.unavailableUntil) return reply(503, sgError('Service Unavailable'));

    const token = bearerToken(req);
    if (token === undefined) return reply(401, sgError('authorization required'));
    if (token !== apiKey) return reply(401, sgError('The provided authorization grant is invalid, expired, or revoked'));

    let raw: Buffer;
    try {
      raw = await readBody(req, maxBodyBytes);
    } catch (e) {
      if (e instanceof BodyTooLargeError) {
        return reply(413, sgError(`Payload Too Large: the total message size must be less than ${maxBodyBytes} bytes`), { Connection: 'close' });
      }
      throw e;
    }

    // per-account fixed 1-second window
    const now = Date.now();
    const window = Math.floor(now / 1000);
    let acct = accounts.get(token);
    if (!acct || acct.window !== window) {
      acct = { window, count: 0 };
      accounts.set(token, acct);
    }
    acct.count++;
    const limit = faults.ratePerSecond;
    const rateHeaders = {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(Math.max(0, Math.floor(limit) - acct.count)),
      'X-RateLimit-Reset': String(window + 1),
    };
    if (acct.count > limit) return reply(429, sgError('too many requests'), rateHeaders);

    let parsed: unknown;
    try {
      parsed = parseJson(raw);
    } catch {
      parsed = undefined;
    }
    const result = validateMailSend(parsed, rule);

    const latency = Math.max(0, latencyMs + (random() * 2 - 1) * spreadMs) + faults.extraLatencyMs;
    if (latency > 0) await sleep(latency, undefined, { signal: abort.signal });

    if (!result.ok) return reply(400, { errors: result.errors }, rateHeaders);

    const sandbox = result.mail.mail_settings?.sandbox_mode?.enable === true;
    if (sandbox) return reply(200, undefined, rateHeaders); // validated, not sent, not stored

    const msg = storeMessage(result.mail, receivedAt);

    let drop = false;
    if (faults.dropNextAcks > 0) {
      faults.dropNextAcks--;
      drop = true;
    } else if (faults.dropAckFraction > 0 && random() < faults.dropAckFraction) {
      drop = true;
    }
    if (drop) {
      st.droppedAcks++;
      leave();
      req.socket.destroy();
      return;
    }
    reply(202, undefined, { ...rateHeaders, 'X-Message-Id': msg.id });
  }

  // ---- Email Activity API ----
  function activityRecords(m: StoredMessage): QueryTarget[] {
    const out: QueryTarget[] = [];
    const eventTime = new Date(m.acceptedAt.getTime() + activityDelayMs).toISOString();
    m.personalizations.forEach((p, i) => {
      p.to.forEach((r, j) => {
        const record: ActivityRecord = {
          from_email: m.from.email,
          msg_id: `${m.id}.filterdrecv-sim-${m.seq}-${i}-${j}.0`,
          subject: p.subject ?? m.subject,
          to_email: r.email,
          status: 'delivered',
          opens_count: 0,
          clicks_count: 0,
          last_event_time: eventTime,
        };
        out.push({ record, uniqueArgs: p.customArgs });
      });
    });
    return out;
  }

  function activity(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== 'GET') return sendJson(res, 405, sgError('method not allowed'));
    const token = bearerToken(req);
    if (token === undefined) return sendJson(res, 401, sgError('authorization required'));
    if (token !== apiKey) return sendJson(res, 401, sgError('The provided authorization grant is invalid, expired, or revoked'));
    const limitRaw = url.searchParams.get('limit') ?? '10';
    const limit = Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      return sendJson(res, 400, sgError('limit must be an integer between 1 and 1000', 'limit'));
    }
    const query = url.searchParams.get('query');
    let predicate: (t: QueryTarget) => boolean = () => true;
    if (query !== null && query.trim() !== '') {
      try {
        predicate = parseActivityQuery(query);
      } catch (e) {
        if (e instanceof QuerySyntaxError) return sendJson(res, 400, sgError(`invalid query: ${e.message}`, 'query'));
        throw e;
      }
    }
    st.activityQueries++;
    const visibleBefore = Date.now() - activityDelayMs;
    const found: ActivityRecord[] = [];
    for (let k = store.length - 1; k >= 0 && found.length < limit; k--) {
      const m = store[k];
      if (!m || m.acceptedAt.getTime() > visibleBefore) continue;
      for (const t of activityRecords(m)) {
        if (found.length < limit && predicate(t)) found.push(t.record);
      }
    }
    sendJson(res, 200, { messages: found });
  }

  // ---- admin ----
  function filterFromQuery(url: URL): MessageFilter | string {
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

  function stats(): ProviderStats {
    return {
      requests: st.requests,
      responses: { ...st.responses },
      accepted: st.accepted,
      droppedAcks: st.droppedAcks,
      inFlight,
      maxInFlight: st.maxInFlight,
      maxRequestsPerSecond: st.maxRequestsPerSecond,
      maxAcceptedPerSecond: st.maxAcceptedPerSecond,
      activityQueries: st.activityQueries,
    };
  }

  async function admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (path === '/_admin/messages' && req.method === 'GET') {
      const f = filterFromQuery(url);
      if (typeof f === 'string') return sendJson(res, 400, { error: f });
      const limit = Number(url.searchParams.get('limit') ?? Infinity);
      let list = messages(f);
      if (Number.isFinite(limit) && limit >= 0) list = list.slice(-limit);
      return sendJson(res, 200, { count: list.length, messages: list.map(toJson) });
    }
    if (path === '/_admin/stats' && req.method === 'GET') return sendJson(res, 200, stats());
    if (path === '/_admin/faults' && req.method === 'GET') return sendJson(res, 200, faultState());
    if (path === '/_admin/faults' && req.method === 'POST') {
      let body: unknown;
      try {
        body = parseJson(await readBody(req, 1 << 20)) ?? {};
      } catch {
        return sendJson(res, 400, { error: 'invalid JSON' });
      }
      const parsed = FaultsSchema.safeParse(body);
      if (!parsed.success) return sendJson(res, 400, { error: 'invalid faults', issues: parsed.error.issues });
      return sendJson(res, 200, setFaults(parsed.data));
    }
    if (path === '/_admin/reset' && req.method === 'POST') {
      reset();
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'not found' });
  }

  // ---- inbox ----
  const page = (title: string, body: string): string =>
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>
body{font-family:system-ui,'Noto Sans Bengali',sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#f4f4f4}code{font-size:.8rem;color:#555}a{color:#0a58ca}pre{white-space:pre-wrap;background:#f8f8f8;padding:.75rem}
</style></head><body>${body}</body></html>`;

  function inbox(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const parts = url.pathname.split('/').filter(Boolean).map((p) => decodeURIComponent(p)); // ['inbox', id?, 'attachments'?, n?]
    if (req.method !== 'GET') return sendText(res, 405, 'text/plain', 'method not allowed');
    if (parts.length === 1) {
      const f = filterFromQuery(url);
      if (typeof f === 'string') return sendText(res, 400, 'text/plain', f);
      const list = messages(f).reverse();
      const shown = list.slice(0, 1000);
      const rows = shown
        .map((m) => {
          const args = Object.entries(m.customArgs)
            .map(([k, v]) => `<code>${escapeHtml(k)}=${escapeHtml(v)}</code>`)
            .join('<br>');
          const atts = m.attachments
            .map((a, n) => `<a href="/inbox/${encodeURIComponent(m.id)}/attachments/${n}" target="_blank">${escapeHtml(a.filename)}</a> <small>(${a.size} B)</small>`)
            .join('<br>');
          return `<tr><td>${escapeHtml(m.acceptedAt.toISOString())}</td><td>${escapeHtml(m.to.join(', '))}</td><td><a href="/inbox/${encodeURIComponent(m.id)}">${escapeHtml(m.subject)}</a></td><td>${args}</td><td>${atts}</td></tr>`;
        })
        .join('\n');
      const more = list.length > shown.length ? `<p>Showing the newest ${shown.length} of ${list.length}.</p>` : '';
      return sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page(
          'Inbox — provider simulator',
          `<h1>Inbox</h1><p>${list.length} message(s) accepted. <a href="/_admin/stats">stats</a></p>${more}
<table><thead><tr><th>Time</th><th>To</th><th>Subject</th><th>Custom args</th><th>Attachments</th></tr></thead><tbody>
${rows}
</tbody></table>`,
        ),
      );
    }
    const m = parts[1] === undefined ? undefined : byId.get(parts[1]);
    if (!m) return sendText(res, 404, 'text/plain', 'message not found');
    if (parts.length === 2) {
      const html = m.content.find((c) => c.type.toLowerCase() === 'text/html');
      const text = m.content.find((c) => c.type.toLowerCase() === 'text/plain');
      const atts = m.attachments
        .map((a, n) => `<li><a href="/inbox/${encodeURIComponent(m.id)}/attachments/${n}" target="_blank">${escapeHtml(a.filename)}</a> (${escapeHtml(a.type)}, ${a.size} B)</li>`)
        .join('');
      return sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page(
          m.subject,
          `<p><a href="/inbox">← inbox</a></p><h1>${escapeHtml(m.subject)}</h1>
<p>From: ${escapeHtml(m.from.email)}<br>To: ${escapeHtml(m.to.join(', '))}<br>Accepted: ${escapeHtml(m.acceptedAt.toISOString())}<br>X-Message-Id: <code>${escapeHtml(m.id)}</code></p>
<p>Custom args: <code>${escapeHtml(JSON.stringify(m.customArgs))}</code></p>
<ul>${atts}</ul>
${html ? `<iframe sandbox srcdoc="${escapeHtml(html.value)}" style="width:100%;height:50vh;border:1px solid #ddd"></iframe>` : ''}
${text ? `<pre>${escapeHtml(text.value)}</pre>` : ''}`,
        ),
      );
    }
    if (parts.length === 4 && parts[2] === 'attachments') {
      const a = m.attachments[Number(parts[3])];
      if (!a) return sendText(res, 404, 'text/plain', 'attachment not found');
      if (a.content === null) return sendText(res, 404, 'text/plain', 'attachment bytes not stored (storeAttachmentBytes: false)');
      const isPdf = a.type === 'application/octet-stream' && a.filename.toLowerCase().endsWith('.pdf');
      const safeName = a.filename.replace(/["\\\r\n]/g, '_');
      return sendText(res, 200, isPdf ? 'application/pdf' : a.type, a.content, {
        'Content-Disposition': `inline; filename="${safeName.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(a.filename)}`,
      });
    }
    sendText(res, 404, 'text/plain', 'not found');
  }

  // ---- routing ----
  async function handler(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/v3/mail/send') return mailSend(req, res);
    if (path === '/v3/messages') return activity(req, res, url);
    if (path.startsWith('/_admin/')) return admin(req, res, url);
    if (path === '/inbox' || path.startsWith('/inbox/')) return inbox(req, res, url);
    if (path === '/') {
      return sendJson(res, 200, {
        name: 'beton provider simulator (SendGrid v3 subset)',
        endpoints: ['POST /v3/mail/send', 'GET /v3/messages?limit=&query=', 'GET /inbox', 'GET /_admin/messages', 'GET /_admin/stats', 'GET|POST /_admin/faults', 'POST /_admin/reset'],
      });
    }
    if (path.startsWith('/v3/')) return sendJson(res, 404, sgError('resource not found'));
    sendJson(res, 404, { error: 'not found' });
  }

  const server = await listen(handler, opts.port ?? 0, opts.host ?? '127.0.0.1');

  return {
    url: server.url,
    port: server.port,
    apiKey,
    messages,
    message: (id) => byId.get(id),
    stats,
    setFaults,
    faults: faultState,
    unavailableFor: (ms) => void setFaults({ unavailableForMs: ms }),
    setDropAckFraction: (f) => void setFaults({ dropAckFraction: f }),
    dropNextAcks: (n) => void setFaults({ dropNextAcks: n }),
    setExtraLatency: (ms) => void setFaults({ extraLatencyMs: ms }),
    setRatePerSecond: (n) => void setFaults({ ratePerSecond: n }),
    reset,
    async close() {
      abort.abort();
      await server.close();
    },
  };
}

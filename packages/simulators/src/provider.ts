/**
 * A SendGrid-compatible email provider simulator (v3 Mail Send + Email Activity subset), for
 * tests, drills and local runs of Beton. Point the real `@sendgrid/mail` client at it:
 *
 *   const client = new Client(); client.setApiKey('SG.beton-dev');
 *   client.setDefaultRequest('baseUrl', sim.url);   // after setApiKey, which resets baseUrl
 *   mail.setClient(client);
 *
 * This file is the mail send itself (SendGrid's "Mail Send" page:
 * https://www.twilio.com/docs/sendgrid/api-reference/mail-send/mail-send), the store of accepted
 * messages and their Event Webhook events, and the routing; each other concern is a module of its
 * own, named with the documentation page it follows:
 *   POST /v3/mail/send                       here: 202 + X-Message-Id | 400 | 401 | 403 | 413 | 429 | 503
 *   POST /v3/mail/batch, /v3/user/scheduled_sends…   scheduled-sends.ts (Cancel Scheduled Sends)
 *   GET  /v3/messages                        activity-api.ts (Email Activity; query language: activity-query.ts)
 *   POST /v3/api_keys, GET /v3/scopes        api-keys.ts (API Keys, permissions)
 *   /v3/user/webhooks/event/settings…        webhook-settings.ts (Webhooks); the posting itself: event-webhook.ts
 *   GET  /inbox…                             inbox.ts (the simulator's own page)
 *   /_admin/…                                admin-api.ts (the simulator's own control API)
 *   types                                    provider-types.ts
 *
 * Order of checks on mail send: 503 (unavailable window) → 401 (no, wrong or revoked key) →
 * 403 (a key without the mail.send scope) → 413 → 429 → 400 (JSON, validation) → 403 (a
 * `from` that is not a verified Sender Identity) → 401 "Maximum credits exceeded" → latency
 * → sandbox (200, nothing stored) → store → 202 (or the lost ack: socket destroyed, message
 * stored) → Event Webhook events (processed, then delivered / deferred / bounce, or dropped
 * for a suppressed address). A message is stored only when it is accepted, and once accepted
 * it is stored even if the client went away during the latency (as a real provider sends it).
 * What each answer looks like is checked against SendGrid's docs and OpenAPI description: see
 * the README of this package.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createEventWebhook, newEventId, type SendGridEvent, type WebhookSettings } from './event-webhook.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityRecord } from './activity-query.ts';
import { createActivityApi } from './activity-api.ts';
import { createAdminApi, FaultsSchema, filterFromQuery } from './admin-api.ts';
import { BodyTooLargeError, bearerToken, listen, makeRandom, parseJson, readBody, sendJson } from './http-util.ts';
import { createInbox } from './inbox.ts';
import { INBOX_FONT_PATH, serveInboxFont } from './inbox-font.ts';
import { createApiKeys } from './api-keys.ts';
import { createScheduledSends } from './scheduled-sends.ts';
import { createWebhookSettingsApi } from './webhook-settings.ts';
import {
  DEFAULT_BOUNCE_DOMAINS,
  isBounceAddress,
  validateMailSend,
  type AddressRule,
  type EmailAddress,
  type SendGridError,
  type ValidMail,
} from './sendgrid-validate.ts';

export * from './provider-types.ts';
import type {
  FaultState,
  MessageFilter,
  ProviderFaults,
  ProviderSimulator,
  ProviderSimulatorOptions,
  ProviderStats,
  StoredAttachment,
  StoredMessage,
  StoredMessageJson,
  StoredPersonalization,
} from './provider-types.ts';

/** SendGrid's own words (docs, twilio.com/docs/api/errors/60222; sendgrid-nodejs issue 1032). */
const SENDER_NOT_VERIFIED =
  'The from address does not match a verified Sender Identity. Mail cannot be sent until this error is resolved. Visit https://sendgrid.com/docs/for-developers/sending-email/sender-identity/ to see the Sender Identity requirements';
const NO_CREDITS = 'Maximum credits exceeded';

const sgError = (message: string, field: string | null = null): { errors: SendGridError[] } => ({
  errors: [{ message, field, help: null }],
});

function newMessageId(): string {
  return randomBytes(16).toString('base64url'); // 22 characters, like SendGrid's
}

function addresses(v: unknown): EmailAddress[] {
  if (!Array.isArray(v)) return [];
  return v.map((a: { email: string; name?: unknown }) => (typeof a.name === 'string' ? { email: a.email, name: a.name } : { email: a.email }));
}

export async function startProviderSimulator(opts: ProviderSimulatorOptions = {}): Promise<ProviderSimulator> {
  const apiKey = opts.apiKey ?? 'SG.beton-dev';
  const initialRate = opts.ratePerSecond ?? 40;
  const latencyMs = opts.latencyMs ?? 1200;
  const spreadMs = opts.latencySpreadMs ?? 200;
  const maxBodyBytes = opts.maxBodyBytes ?? 30 * 1024 * 1024;
  const storeBytes = opts.storeAttachmentBytes ?? true;
  const initialActivityDelayMs = opts.activityDelayMs ?? 0;
  const seed = opts.seed ?? 1;
  const log = opts.log ?? (() => {});
  const rule: AddressRule = {
    bounceDomains: (opts.bounceDomains ?? [...DEFAULT_BOUNCE_DOMAINS]).map((d) => d.toLowerCase()),
    bounceAddresses: (opts.bounceAddresses ?? []).map((a) => a.toLowerCase()),
  };
  const deferAddresses = new Set((opts.deferAddresses ?? []).map((a) => a.toLowerCase()));
  const activityApi = opts.activityApi ?? false;
  const scopes = opts.scopes ?? ['mail.send', 'messages.read', 'user.webhooks.event.settings.read', 'user.webhooks.event.settings.create', 'api_keys.create'];
  const apiKeys = createApiKeys({ apiKey, scopes });
  /** The scopes of the request's key ([] for none: authorize refused it already). */
  const callerScopes = (req: IncomingMessage) => apiKeys.scopesOf(bearerToken(req) ?? '') ?? [];
  const verifiedSenders = new Set((opts.verifiedSenders ?? ['payroll@beton.example']).map((a) => a.toLowerCase()));
  const verifiedDomains = (opts.verifiedDomains ?? []).map((d) => d.toLowerCase());
  const activityPerMinute = opts.activityPerMinute ?? 6;
  const delays = { processedMs: 200, deferredMs: 600, deliveredMs: 1000, ...opts.eventDelays };
  const isVerifiedSender = (email: string) => {
    const lower = email.toLowerCase();
    return verifiedSenders.has(lower) || verifiedDomains.includes(lower.slice(lower.lastIndexOf('@') + 1));
  };

  const abort = new AbortController();
  let random = makeRandom(seed);

  // ---- state (reset() restores it) ----
  let store: StoredMessage[] = [];
  let byId = new Map<string, StoredMessage>();
  let seq = 0;
  const freshFaults = () => ({
    unavailableUntil: 0,
    dropAckFraction: 0,
    dropNextAcks: 0,
    extraLatencyMs: 0,
    ratePerSecond: initialRate,
    keyRevoked: false,
    credits: opts.credits ?? Infinity,
    activityDelayMs: initialActivityDelayMs,
    activityUnavailableUntil: 0,
  });
  let faults = freshFaults();
  let suppressions = new Set<string>();
  let eventLog: SendGridEvent[] = [];
  const webhook = createEventWebhook({ random: () => random(), log, ...(opts.webhook ? { settings: opts.webhook } : {}) });
  let accounts = new Map<string, { window: number; count: number }>();
  const freshStats = () => ({
    requests: 0,
    responses: {} as Record<string, number>,
    accepted: 0,
    droppedAcks: 0,
    maxInFlight: 0,
    maxRequestsPerSecond: 0,
    maxAcceptedPerSecond: 0,
    events: {} as Record<string, number>,
    reqWindow: -1,
    reqWindowCount: 0,
    accWindows: new Map<number, number>(),
  });
  let st = freshStats();
  let inFlight = 0;
  const webhookSettings = createWebhookSettingsApi({ publicKey: webhook.publicKey, setUrl: (url) => void webhook.configure({ url }) });
  const scheduled = createScheduledSends(opts.scheduledSends ?? {}, {
    deliver: (m) => emitEvents(m as StoredMessage, 'outcome'),
    discard: (m) => log(`[provider-sim] discarded ${m.id} (batch ${m.batchId} cancelled)`),
  });

  function faultState(): FaultState {
    const now = Date.now();
    return {
      unavailableUntil: faults.unavailableUntil > now ? new Date(faults.unavailableUntil).toISOString() : null,
      unavailableRemainingMs: Math.max(0, faults.unavailableUntil - now),
      dropAckFraction: faults.dropAckFraction,
      dropNextAcks: faults.dropNextAcks,
      extraLatencyMs: faults.extraLatencyMs,
      ratePerSecond: faults.ratePerSecond,
      keyRevoked: faults.keyRevoked,
      credits: Number.isFinite(faults.credits) ? faults.credits : null,
      activityDelayMs: faults.activityDelayMs,
      activityUnavailableRemainingMs: Math.max(0, faults.activityUnavailableUntil - now),
    };
  }

  function setFaults(f: ProviderFaults): FaultState {
    const parsed = FaultsSchema.parse(f);
    if (parsed.unavailableForMs !== undefined) faults.unavailableUntil = Date.now() + parsed.unavailableForMs;
    if (parsed.dropAckFraction !== undefined) faults.dropAckFraction = parsed.dropAckFraction;
    if (parsed.dropNextAcks !== undefined) faults.dropNextAcks = parsed.dropNextAcks;
    if (parsed.extraLatencyMs !== undefined) faults.extraLatencyMs = parsed.extraLatencyMs;
    if (parsed.ratePerSecond !== undefined) faults.ratePerSecond = parsed.ratePerSecond;
    if (parsed.keyRevoked !== undefined) faults.keyRevoked = parsed.keyRevoked;
    if (parsed.credits !== undefined) faults.credits = parsed.credits;
    if (parsed.activityDelayMs !== undefined) faults.activityDelayMs = parsed.activityDelayMs;
    if (parsed.activityUnavailableForMs !== undefined) faults.activityUnavailableUntil = Date.now() + parsed.activityUnavailableForMs;
    log(`[provider-sim] faults ${JSON.stringify(parsed)}`);
    return faultState();
  }

  function reset(): void {
    store = [];
    byId = new Map();
    seq = 0;
    faults = freshFaults();
    suppressions = new Set();
    eventLog = [];
    activityApiHandler.reset();
    webhook.reset();
    scheduled.reset();
    apiKeys.reset();
    webhookSettings.reset();
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
    if (!f.includeDiscarded && (m.state === 'discarded' || scheduled.cancelled(m.batchId))) return false;
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
      sendAt: typeof mail['send_at'] === 'number' ? new Date(mail['send_at'] * 1000) : null,
      batchId: typeof mail['batch_id'] === 'string' ? mail['batch_id'] : null,
      state: 'sent',
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

  /** 401 for a missing, wrong or revoked key (SendGrid's bodies); undefined when the key is good. */
  function authorize(req: IncomingMessage): { status: number; body: unknown } | undefined {
    const token = bearerToken(req);
    if (token === undefined) return { status: 401, body: sgError('authorization required') };
    if (apiKeys.scopesOf(token) === undefined || faults.keyRevoked)
      return { status: 401, body: sgError('The provided authorization grant is invalid, expired, or revoked') };
    return undefined;
  }

  // ---- Event Webhook events ----
  const activityStatus = new Map<string, ActivityRecord['status']>(); // message id + recipient → the feed's status

  function emit(
    event: string,
    m: StoredMessage,
    email: string,
    args: Record<string, string>,
    categories: unknown,
    delayMs: number,
    extra: Record<string, unknown> = {},
  ): void {
    const e: SendGridEvent = {
      // Custom args first: SendGrid's own keys win over custom args of the same name (docs).
      ...args,
      email,
      timestamp: Math.floor((Date.now() + delayMs) / 1000),
      'smtp-id': `<${m.id}@ismtpd-sim>`,
      event,
      ...(categories === undefined ? {} : { category: categories }),
      sg_event_id: newEventId(),
      sg_message_id: `${m.id}.filterdrecv-sim-${m.seq}.0`,
      ...extra,
    };
    eventLog.push(e);
    st.events[event] = (st.events[event] ?? 0) + 1;
    const status: ActivityRecord['status'] = event === 'delivered' ? 'delivered' : event === 'bounce' || event === 'dropped' ? 'not_delivered' : 'processed';
    setTimeout(() => activityStatus.set(`${m.id} ${email.toLowerCase()}`, status), delayMs).unref();
    webhook.emit(e, delayMs);
  }

  /**
   * The events of an accepted message, per `to` recipient, after the configured delays: 'all' for
   * a message sent at once; a scheduled one gets 'processed' when it is accepted and 'outcome'
   * (delivered, bounce, deferred, or dropped for a suppressed address) at its send_at.
   */
  function emitEvents(m: StoredMessage, phase: 'all' | 'processed' | 'outcome' = 'all'): void {
    const categories = m.body['categories'];
    m.personalizations.forEach((p) => {
      for (const r of p.to) {
        const lower = r.email.toLowerCase();
        if (phase === 'processed') {
          emit('processed', m, r.email, p.customArgs, categories, delays.processedMs);
          continue;
        }
        if (suppressions.has(lower)) {
          emit('dropped', m, r.email, p.customArgs, categories, delays.processedMs, { reason: 'Bounced Address', status: '5.0.0' });
          continue;
        }
        if (phase === 'all') emit('processed', m, r.email, p.customArgs, categories, delays.processedMs);
        if (isBounceAddress(r.email, rule)) {
          emit('bounce', m, r.email, p.customArgs, categories, delays.deliveredMs, {
            reason: '550 5.1.1 The email account that you tried to reach does not exist.',
            status: '5.1.1',
            type: 'bounce',
          });
          // Suppressed from the bounce on: later sends to it are dropped.
          setTimeout(() => suppressions.add(lower), delays.deliveredMs).unref();
          continue;
        }
        if (deferAddresses.has(lower)) {
          emit('deferred', m, r.email, p.customArgs, categories, delays.deferredMs, { response: '421 4.7.0 Try again later', attempt: '1' });
          emit('delivered', m, r.email, p.customArgs, categories, delays.deliveredMs + delays.deferredMs, { response: '250 OK' });
          continue;
        }
        emit('delivered', m, r.email, p.customArgs, categories, delays.deliveredMs, { response: '250 OK' });
      }
    });
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

    const auth = authorize(req);
    if (auth) return reply(auth.status, auth.body);
    const token = bearerToken(req)!;
    if (!callerScopes(req).includes('mail.send')) return reply(403, sgError('access forbidden'));

    let raw: Buffer;
    try {
      raw = await readBody(req, maxBodyBytes);
    } catch (e) {
      // The whole body was read (readBody drains it), so the client receives the 413 itself.
      if (e instanceof BodyTooLargeError) return reply(413, sgError('content too large'));
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
    const result = validateMailSend(parsed);

    const latency = Math.max(0, latencyMs + (random() * 2 - 1) * spreadMs) + faults.extraLatencyMs;
    if (latency > 0) await sleep(latency, undefined, { signal: abort.signal });

    if (!result.ok) return reply(400, { errors: result.errors }, rateHeaders);
    const scheduleErrors = scheduled.validate(result.mail['send_at'], result.mail['batch_id'], Date.now());
    if (scheduleErrors.length > 0) return reply(400, { errors: scheduleErrors }, rateHeaders);
    if (!isVerifiedSender(result.mail.from.email)) return reply(403, sgError(SENDER_NOT_VERIFIED, 'from'), rateHeaders);
    const recipients = result.mail.personalizations.reduce((a, p) => a + p.to.length + (p.cc?.length ?? 0) + (p.bcc?.length ?? 0), 0);
    if (faults.credits < recipients) return reply(401, sgError(NO_CREDITS), rateHeaders);

    const sandbox = result.mail.mail_settings?.sandbox_mode?.enable === true;
    if (sandbox) return reply(200, undefined, rateHeaders); // validated, not sent, not stored

    faults.credits -= recipients;
    const msg = storeMessage(result.mail, receivedAt);
    // A message with a send_at ahead or a batch id waits for its time (scheduled-sends.ts).
    if (scheduled.schedule(msg)) {
      if (msg.state === 'scheduled') emitEvents(msg, 'processed');
    } else emitEvents(msg);

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

  const activityApiHandler = createActivityApi({
    enabled: activityApi,
    perMinute: activityPerMinute,
    authorize,
    callerScopes,
    store: () => store,
    status: activityStatus,
    faults: () => faults,
  });

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
      activityQueries: activityApiHandler.stats().queries,
      activityRefused: activityApiHandler.stats().refused,
      events: { ...st.events },
      webhook: webhook.stats(),
      scheduled: scheduled.stats(),
    };
  }

  function configureWebhook(settings: Partial<WebhookSettings> & { unreachableForMs?: number }): WebhookSettings {
    const { unreachableForMs, ...rest } = settings;
    return webhook.configure({ ...rest, ...(unreachableForMs === undefined ? {} : { unreachableUntil: Date.now() + unreachableForMs }) });
  }

  const admin = createAdminApi({
    messages,
    toJson,
    stats,
    faultState,
    setFaults,
    webhook: () => ({ ...webhook.settings, stats: webhook.stats() }),
    configureWebhook,
    suppressed: () => [...suppressions],
    reset,
  });

  const inbox = createInbox({ messages, message: (id) => byId.get(id), filterFromQuery });

  // ---- routing ----
  async function handler(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/v3/mail/send') return mailSend(req, res);
    if (path === '/v3/messages') return activityApiHandler.handle(req, res, url);
    if (path.startsWith('/v3/mail/batch') || path.startsWith('/v3/user/scheduled_sends')) {
      const auth = authorize(req);
      if (auth) return sendJson(res, auth.status, auth.body);
      if (await scheduled.handle(req, res, path)) return;
    }
    if (path === '/v3/scopes' && req.method === 'GET') {
      const auth = authorize(req);
      if (auth) return sendJson(res, auth.status, auth.body);
      return sendJson(res, 200, { scopes: callerScopes(req) });
    }
    if (path === '/v3/api_keys' || path.startsWith('/v3/user/webhooks/event/settings')) {
      const auth = authorize(req);
      if (auth) return sendJson(res, auth.status, auth.body);
      if (await apiKeys.handle(req, res, path, callerScopes(req))) return;
      if (await webhookSettings.handle(req, res, path)) return;
    }
    if (path.startsWith('/_admin/')) return admin(req, res, url);
    if (path === INBOX_FONT_PATH) return serveInboxFont(res);
    if (path === '/inbox' || path.startsWith('/inbox/')) return inbox(req, res, url);
    if (path === '/') {
      return sendJson(res, 200, {
        name: 'beton provider simulator (SendGrid v3 subset)',
        endpoints: [
          'POST /v3/mail/send',
          'POST /v3/mail/batch',
          'GET /v3/mail/batch/{batch_id}',
          'GET|POST /v3/user/scheduled_sends',
          'GET|PATCH|DELETE /v3/user/scheduled_sends/{batch_id}',
          'GET /v3/messages?limit=&query=',
          'GET /inbox',
          'GET /_admin/messages',
          'GET /_admin/stats',
          'GET|POST /_admin/faults',
          'POST /_admin/reset',
        ],
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
    webhookPublicKey: webhook.publicKey,
    configureWebhook,
    suppressed: () => [...suppressions],
    createApiKey: (name, keyScopes) => apiKeys.create(name, keyScopes).apiKey,
    events: (key) => (key === undefined ? [...eventLog] : eventLog.filter((e) => e['idempotency_key'] === key)),
    async close() {
      abort.abort();
      webhook.close();
      scheduled.close();
      await server.close();
    },
  };
}

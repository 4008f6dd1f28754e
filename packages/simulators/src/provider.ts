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
import { z } from 'zod';
import { parseActivityQuery, QuerySyntaxError, type ActivityRecord, type QueryTarget } from './activity-query.ts';
import { BodyTooLargeError, bearerToken, escapeHtml, listen, makeRandom, parseJson, readBody, sendJson, sendText } from './http-util.ts';
import { INBOX_FONT_PATH, inboxFontCss, serveInboxFont } from './inbox-font.ts';
import { createApiKeys } from './api-keys.ts';
import { createScheduledSends, type ScheduledSendsOptions } from './scheduled-sends.ts';
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
   * Unreachable recipient domains (and their subdomains): the request is accepted (202), then
   * the address bounces (a `bounce` event, 550 5.1.1) and is suppressed: later sends to it are
   * dropped (a `dropped` event, "Bounced Address"). Default ['invalid.example'].
   */
  bounceDomains?: string[];
  /** Full recipient addresses that bounce the same way (case-insensitive). Default []. */
  bounceAddresses?: string[];
  /** Recipient addresses whose delivery is deferred once (a `deferred` event) before it is delivered. Default []. */
  deferAddresses?: string[];
  /**
   * Scopes of the account's key `apiKey` (GET /v3/scopes); mail send needs `mail.send`, the Email
   * Activity API `messages.read`, creating keys `api_keys.create` (api-keys.ts). Default: mail.send,
   * messages.read, user.webhooks.event.settings.read, user.webhooks.event.settings.create, api_keys.create.
   */
  scopes?: string[];
  /**
   * Verified Sender Identities: single senders (full addresses) and authenticated domains
   * (any address at them). Any other `from` gets 403 (field `from`). Default:
   * ['payroll@beton.example'] and no domain.
   */
  verifiedSenders?: string[];
  verifiedDomains?: string[];
  /** Emails the account may still send, one per recipient; none left: 401 "Maximum credits exceeded". Default Infinity. */
  credits?: number;
  /** The Email Activity API add-on; without it `GET /v3/messages` answers 403. Default false. */
  activityApi?: boolean;
  /** Activity API requests per minute per account (SendGrid: 6); above it 429. Default 6. */
  activityPerMinute?: number;
  /** Delays of the events after acceptance (ms): processed, deferred, delivered or bounce. */
  eventDelays?: { processedMs?: number; deferredMs?: number; deliveredMs?: number };
  /** The Event Webhook's settings (url, batchMs, duplicateFraction, shuffle, lagMs). */
  webhook?: Partial<WebhookSettings>;
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
  /** Scheduled sends' limits (cancel cutoff, 72 hours ahead, 10 batches held): scheduled-sends.ts. Default: SendGrid's. */
  scheduledSends?: ScheduledSendsOptions;
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
  /** The API key revoked (401 on every request) until set back to false. */
  keyRevoked?: boolean;
  /** Emails the account may still send (0: 401 "Maximum credits exceeded"). */
  credits?: number;
  /** The activity feed's lag, ms. */
  activityDelayMs?: number;
  /** The Email Activity API answers 503 for the next N ms (0 ends it now). */
  activityUnavailableForMs?: number;
}

export interface FaultState {
  unavailableUntil: string | null;
  unavailableRemainingMs: number;
  dropAckFraction: number;
  dropNextAcks: number;
  extraLatencyMs: number;
  ratePerSecond: number;
  keyRevoked: boolean;
  credits: number | null;
  activityDelayMs: number;
  activityUnavailableRemainingMs: number;
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
  /** Mail Send's `send_at` (null: sent at once). */
  sendAt: Date | null;
  /** Mail Send's `batch_id` (null: none). */
  batchId: string | null;
  /**
   * 'sent' (given to the receiving side: its events follow), 'scheduled' (waiting for send_at),
   * 'paused' (its batch paused at send_at), 'discarded' (its batch was cancelled: never sent).
   */
  state: 'scheduled' | 'sent' | 'discarded' | 'paused';
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
  /**
   * Also the messages that are or will be discarded (their batch was cancelled). Default false:
   * the store's answer to "what did (or will) the recipient get" — a duplicate is two of these.
   */
  includeDiscarded?: boolean;
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
  /** Email Activity API requests refused: 403 (no add-on, no scope) and 429 (over 6 a minute). */
  activityRefused: { '403': number; '429': number };
  /** Events emitted per type (processed, delivered, deferred, bounce, dropped). */
  events: Record<string, number>;
  /** The Event Webhook: batches posted, failed posts (retried), events posted, duplicates posted, events waiting. */
  webhook: { posted: number; postFailures: number; eventsPosted: number; duplicatesPosted: number; queued: number };
  /** Scheduled sends: batches created, messages scheduled, discarded (cancelled batch), cancellations, refusals by reason. */
  scheduled: { batches: number; scheduled: number; discarded: number; cancellations: number; refused: Record<string, number> };
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
  /** The Event Webhook's public key, base64 DER (as GET /v3/user/webhooks/event/settings/signed returns it). */
  readonly webhookPublicKey: string;
  /** Changes the Event Webhook's settings (url, batchMs, duplicateFraction, shuffle, lagMs, unreachableForMs). */
  configureWebhook(settings: Partial<WebhookSettings> & { unreachableForMs?: number }): WebhookSettings;
  /** Addresses suppressed after a bounce. */
  suppressed(): string[];
  /** A new API key of the account with these scopes (as POST /v3/api_keys makes one); returns the key. */
  createApiKey(name: string, scopes: string[]): string;
  /** The events emitted for a key (custom arg idempotency_key), in emission order. */
  events(idempotencyKey?: string): SendGridEvent[];
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
    keyRevoked: z.boolean().optional(),
    credits: z.number().min(0).optional(),
    activityDelayMs: z.number().min(0).optional(),
    activityUnavailableForMs: z.number().min(0).optional(),
  })
  .strict();

const WebhookSchema = z
  .object({
    url: z.string().url().nullable().optional(),
    batchMs: z.number().int().positive().optional(),
    duplicateFraction: z.number().min(0).max(1).optional(),
    shuffle: z.boolean().optional(),
    lagMs: z.number().min(0).optional(),
    unreachableForMs: z.number().min(0).optional(),
  })
  .strict();

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
  let activityCalls: number[] = []; // times of the last minute's Activity API requests
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
    activityQueries: 0,
    activityRefused: { '403': 0, '429': 0 },
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
    activityCalls = [];
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

  // ---- Email Activity API ----
  function activityRecords(m: StoredMessage): QueryTarget[] {
    const out: QueryTarget[] = [];
    const eventTime = new Date(m.acceptedAt.getTime() + faults.activityDelayMs).toISOString();
    m.personalizations.forEach((p, i) => {
      p.to.forEach((r, j) => {
        const record: ActivityRecord = {
          from_email: m.from.email,
          msg_id: `${m.id}.filterdrecv-sim-${m.seq}-${i}-${j}.0`,
          subject: p.subject ?? m.subject,
          to_email: r.email,
          status: activityStatus.get(`${m.id} ${r.email.toLowerCase()}`) ?? 'processed',
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
    const auth = authorize(req);
    if (auth) return sendJson(res, auth.status, auth.body);
    // A paid add-on, and a scope of the key (docs: "You must purchase additional email activity history").
    if (!activityApi || !callerScopes(req).includes('messages.read')) {
      st.activityRefused['403']++;
      return sendJson(res, 403, sgError('access forbidden'));
    }
    if (Date.now() < faults.activityUnavailableUntil) return sendJson(res, 503, sgError('Service Unavailable'));
    // 6 requests per minute (docs, "Email Activity", Rate limits; 429 "too many requests").
    const now = Date.now();
    activityCalls = activityCalls.filter((t) => t > now - 60_000);
    if (activityCalls.length >= activityPerMinute) {
      st.activityRefused['429']++;
      const reset = Math.ceil((activityCalls[0]! + 60_000) / 1000);
      return sendJson(
        res,
        429,
        { errors: [{ message: 'too many requests' }] },
        { 'X-RateLimit-Limit': String(activityPerMinute), 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(reset) },
      );
    }
    activityCalls.push(now);
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
    const visibleBefore = Date.now() - faults.activityDelayMs;
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
      activityRefused: { ...st.activityRefused },
      events: { ...st.events },
      webhook: webhook.stats(),
      scheduled: scheduled.stats(),
    };
  }

  function configureWebhook(settings: Partial<WebhookSettings> & { unreachableForMs?: number }): WebhookSettings {
    const { unreachableForMs, ...rest } = settings;
    return webhook.configure({ ...rest, ...(unreachableForMs === undefined ? {} : { unreachableUntil: Date.now() + unreachableForMs }) });
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
    if (path === '/_admin/webhook' && req.method === 'GET') return sendJson(res, 200, { ...webhook.settings, stats: webhook.stats() });
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
      return sendJson(res, 200, configureWebhook({ ...rest, ...(url === undefined ? {} : { url }) }));
    }
    if (path === '/_admin/suppressions' && req.method === 'GET') return sendJson(res, 200, { suppressed: [...suppressions] });
    if (path === '/_admin/reset' && req.method === 'POST') {
      reset();
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'not found' });
  }

  // ---- inbox ----
  const page = (req: IncomingMessage, title: string, body: string): string =>
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>
${inboxFontCss(originOf(req))}
body{margin:1.5rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#f4f4f4}code{font-size:.8rem;color:#555}a{color:#0a58ca}pre{white-space:pre-wrap;background:#f8f8f8;padding:.75rem}
</style></head><body>${body}</body></html>`;

  /** The origin the browser reached the simulator at (its Host header): the email body's font is fetched from it. */
  const originOf = (req: IncomingMessage) => `http://${req.headers.host ?? '127.0.0.1'}`;

  function inbox(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const parts = url.pathname
      .split('/')
      .filter(Boolean)
      .map((p) => decodeURIComponent(p)); // ['inbox', id?, 'attachments'?, n?]
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
            .map(
              (a, n) =>
                `<a href="/inbox/${encodeURIComponent(m.id)}/attachments/${n}" target="_blank">${escapeHtml(a.filename)}</a> <small>(${a.size} B)</small>`,
            )
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
          req,
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
        .map(
          (a, n) =>
            `<li><a href="/inbox/${encodeURIComponent(m.id)}/attachments/${n}" target="_blank">${escapeHtml(a.filename)}</a> (${escapeHtml(a.type)}, ${a.size} B)</li>`,
        )
        .join('');
      return sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page(
          req,
          m.subject,
          `<p><a href="/inbox">← inbox</a></p><h1>${escapeHtml(m.subject)}</h1>
<p>From: ${escapeHtml(m.from.email)}<br>To: ${escapeHtml(m.to.join(', '))}<br>Accepted: ${escapeHtml(m.acceptedAt.toISOString())}<br>X-Message-Id: <code>${escapeHtml(m.id)}</code></p>
<p>Custom args: <code>${escapeHtml(JSON.stringify(m.customArgs))}</code></p>
<ul>${atts}</ul>
${html ? `<iframe sandbox srcdoc="${escapeHtml(`<style>${inboxFontCss(originOf(req))}</style>${html.value}`)}" style="width:100%;height:50vh;border:1px solid #ddd"></iframe>` : ''}
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

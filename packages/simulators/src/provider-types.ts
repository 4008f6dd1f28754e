/**
 * The provider simulator's public types: its options, faults, stored messages and stats
 * (provider.ts wires the modules that implement them).
 */
import type { SendGridEvent, WebhookSettings } from './event-webhook.ts';
import type { ScheduledSendsOptions } from './scheduled-sends.ts';
import type { EmailAddress } from './sendgrid-validate.ts';

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

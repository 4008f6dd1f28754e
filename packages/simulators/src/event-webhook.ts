/**
 * The provider simulator's Event Webhook, as SendGrid documents it:
 * - POSTs JSON arrays of events to one URL (docs, "Getting Started with the Event Webhook":
 *   "Events post every 30 seconds or when the batch size reaches 768 kilobytes - whichever
 *   occurs first"; here `batchMs`, default 1000, and 768 KB);
 * - every event carries `email`, `timestamp` (unix seconds), `event`, `smtp-id`, `sg_event_id`
 *   (a base64url UUIDv4, "unique ... for deduplication purposes"), `sg_message_id`, and the
 *   message's custom args as top-level fields ("Any custom arguments that you include with an
 *   email sent through v3 Mail Send gets added to your Event Webhook response"); bounce and
 *   dropped carry `reason` and `status`, bounce `type`, delivered and deferred `response`,
 *   deferred `attempt` (docs, "Event Webhook Reference");
 * - signs each POST with ECDSA P-256 over `timestamp + body`: headers
 *   `X-Twilio-Email-Event-Webhook-Signature` (base64 DER) and `-Timestamp` (docs, "Getting
 *   Started with the Event Webhook Security Features"; verified in the tests with the official
 *   `@sendgrid/eventwebhook`); the public key is base64 DER (SubjectPublicKeyInfo), as
 *   `GET /v3/user/webhooks/event/settings/signed` returns it;
 * - retries a POST that got no 2xx ("our server retrying a POST until we receive a 2xx
 *   response or the maximum time has expired ... for up to 24 hours"), and posts duplicates
 *   ("It is possible to see duplicate events") and out of order, at the fractions set.
 */
import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Twilio-Email-Event-Webhook-Signature';
export const TIMESTAMP_HEADER = 'X-Twilio-Email-Event-Webhook-Timestamp';

export type SendGridEvent = Record<string, unknown> & { email: string; timestamp: number; event: string; sg_event_id: string };

export interface WebhookSettings {
  /** Where events are POSTed; null: the webhook is off (events are dropped, as SendGrid does when none is set). */
  url: string | null;
  /** Flush period of a batch. Default 1000 ms (SendGrid: 30 s). */
  batchMs: number;
  /** Fraction 0..1 of events posted a second time in a later batch. */
  duplicateFraction: number;
  /** Shuffle each batch (events out of order). */
  shuffle: boolean;
  /** Extra delay before an event is posted (a late webhook), ms. */
  lagMs: number;
  /** Until this time (epoch ms) every POST fails as if the receiver were unreachable. */
  unreachableUntil: number;
}

/** Base64 DER SubjectPublicKeyInfo, SendGrid's public key format. */
export function publicKeyBase64(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** Signs `timestamp + body` with ECDSA/SHA-256: the value of the signature header (base64 DER). */
export function signPayload(privateKey: KeyObject, timestamp: string, body: string): string {
  const signer = createSign('sha256');
  signer.update(timestamp + body);
  return signer.sign(privateKey).toString('base64');
}

/** A new sg_event_id: a UUIDv4 string, base64url encoded (docs, "Troubleshooting"). */
export function newEventId(): string {
  return Buffer.from(randomUUID()).toString('base64url');
}

export interface EventWebhook {
  readonly publicKey: string;
  readonly settings: WebhookSettings;
  configure(settings: Partial<WebhookSettings>): WebhookSettings;
  /** Queues an event to be posted after `delayMs`. */
  emit(event: SendGridEvent, delayMs: number): void;
  stats(): { queued: number; posted: number; postFailures: number; eventsPosted: number; duplicatesPosted: number };
  reset(): void;
  close(): void;
}

export function createEventWebhook(options: { random: () => number; log: (line: string) => void; settings?: Partial<WebhookSettings> }): EventWebhook {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const publicKeyText = publicKeyBase64(publicKey);
  const fresh = (): WebhookSettings => ({ url: null, batchMs: 1000, duplicateFraction: 0, shuffle: false, lagMs: 0, unreachableUntil: 0, ...options.settings });
  let settings = fresh();
  const timers = new Set<NodeJS.Timeout>();
  let due: SendGridEvent[] = []; // ready to go in the next batch
  let retry: SendGridEvent[][] = []; // batches that got no 2xx
  let counters = { posted: 0, postFailures: 0, eventsPosted: 0, duplicatesPosted: 0 };
  let closed = false;
  let flushing = false;
  const copies = new WeakSet<SendGridEvent>(); // duplicates are not duplicated again

  const later = (fn: () => void, ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  async function post(batch: SendGridEvent[]): Promise<boolean> {
    if (!settings.url || Date.now() < settings.unreachableUntil) return false;
    const body = JSON.stringify(batch);
    const timestamp = String(Math.floor(Date.now() / 1000));
    try {
      const res = await fetch(settings.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          [SIGNATURE_HEADER]: signPayload(privateKey, timestamp, body),
          [TIMESTAMP_HEADER]: timestamp,
          'User-Agent': 'SendGrid Event API',
        },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer().catch(() => {});
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }

  async function flush(): Promise<void> {
    if (flushing || closed) return;
    flushing = true;
    try {
      const batches = [...retry];
      retry = [];
      if (due.length > 0) {
        let batch = due;
        due = [];
        if (settings.shuffle) batch = shuffled(batch);
        // Chunks of at most ~768 KB, SendGrid's batch size.
        let chunk: SendGridEvent[] = [];
        let size = 2;
        for (const e of batch) {
          const n = JSON.stringify(e).length + 1;
          if (chunk.length > 0 && size + n > 768 * 1024) {
            batches.push(chunk);
            chunk = [];
            size = 2;
          }
          chunk.push(e);
          size += n;
        }
        if (chunk.length) batches.push(chunk);
      }
      for (const b of batches) {
        if (closed) return;
        if (!settings.url) continue; // no webhook configured: SendGrid posts nothing
        if (await post(b)) {
          counters.posted++;
          counters.eventsPosted += b.length;
          // A duplicate of some events, in a later batch.
          for (const e of b) {
            if (settings.duplicateFraction > 0 && !copies.has(e) && options.random() < settings.duplicateFraction) {
              counters.duplicatesPosted++;
              const copy = { ...e };
              copies.add(copy);
              later(() => due.push(copy), settings.batchMs * (1 + Math.floor(options.random() * 3)));
            }
          }
        } else {
          counters.postFailures++;
          retry.push(b);
        }
      }
    } finally {
      flushing = false;
    }
  }

  function shuffled<T>(xs: T[]): T[] {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(options.random() * (i + 1));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }

  let loopMs = settings.batchMs;
  let interval = setInterval(() => void flush(), settings.batchMs);
  interval.unref();

  return {
    publicKey: publicKeyText,
    get settings() {
      return settings;
    },
    configure(next) {
      settings = { ...settings, ...next };
      if (settings.batchMs !== loopMs) {
        clearInterval(interval);
        interval = setInterval(() => void flush(), settings.batchMs);
        interval.unref();
        loopMs = settings.batchMs;
      }
      options.log(`[provider-sim] event webhook ${JSON.stringify({ ...next })}`);
      return settings;
    },
    emit(event, delayMs) {
      if (closed) return;
      later(() => due.push(event), Math.max(0, delayMs + settings.lagMs));
    },
    stats() {
      return { queued: due.length + retry.reduce((a, b) => a + b.length, 0), ...counters };
    },
    reset() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      due = [];
      retry = [];
      counters = { posted: 0, postFailures: 0, eventsPosted: 0, duplicatesPosted: 0 };
      const url = settings.url;
      settings = { ...fresh(), url };
    },
    close() {
      closed = true;
      clearInterval(interval);
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

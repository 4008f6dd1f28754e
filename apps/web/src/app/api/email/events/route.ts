/**
 * SendGrid's Event Webhook: `POST /api/email/events`, public (SendGrid calls it),
 * authenticated by the batch's ECDSA signature, verified with `@sendgrid/eventwebhook` against
 * SENDGRID_WEBHOOK_PUBLIC_KEY. Answers fast: the batch is stored (each event once, by
 * `sg_event_id`) and the apply-email-events job is enqueued in one transaction; the job moves
 * the deliveries' states. Refused, counted (email_webhook_counts) and never stored: a body over
 * 1 MB (413), a missing or wrong signature (401), a timestamp outside the tolerance (401, a
 * replay), a body that is not a JSON array (400); no key configured (503: SendGrid retries).
 * Unknown event types and events for unknown keys are ignored and counted. Never a 500.
 */
import { inTransaction } from '@beton/db/transaction';
import { isConnectionError, retryOnConnectionError } from '@beton/jobs/client';
import { countWebhook, storeEventBatch, type WebhookOutcome } from '@beton/payroll/events';
import { EventWebhook, EventWebhookHeader } from '@sendgrid/eventwebhook';
import { db } from '../../../../server/db.ts';
import { readBodyCapped } from '../../../../server/http.ts';
import { jobClientFor } from '../../../../server/trpc.ts';
import { env } from '../../../../env.ts';

export const dynamic = 'force-dynamic';

/** Largest batch accepted; SendGrid posts batches of up to 768 KB. */
const MAX_BYTES = 1024 * 1024;

const verifier = new EventWebhook();
let cachedKey: { text: string; key: ReturnType<EventWebhook['convertPublicKeyToECDSA']> } | undefined;
function publicKey() {
  const text = env().SENDGRID_WEBHOOK_PUBLIC_KEY;
  if (!text) return undefined;
  if (cachedKey?.text !== text) cachedKey = { text, key: verifier.convertPublicKeyToECDSA(text) };
  return cachedKey.key;
}

/**
 * A refused batch is counted before it is answered; when the database is unreachable for a
 * moment (a terminated connection, a restart), the answer goes out at once and the count is
 * retried in the background (the engine's connection retry, up to COUNT_RETRY_MS), so a refusal
 * during a fault still counts. A count whose commit was lost with its connection may count twice.
 */
const COUNT_RETRY_MS = 30_000;
async function countRefusal(pool: ReturnType<typeof db>, outcome: WebhookOutcome): Promise<void> {
  const count = () => countWebhook(pool, { [outcome]: 1 });
  const lost = (error: unknown) =>
    console.error(`webhook: a refusal (${outcome}) could not be counted: ${error instanceof Error ? error.message : String(error)}`);
  await count().catch((first: unknown) => {
    if (isConnectionError(first)) void retryOnConnectionError(count, { deadlineMs: COUNT_RETRY_MS }).catch(lost);
    else lost(first); // never a 500 for a count
  });
}

export async function POST(req: Request): Promise<Response> {
  const pool = db();
  const refuse = async (status: number, outcome: WebhookOutcome, message: string) => {
    await countRefusal(pool, outcome);
    return Response.json({ error: message }, { status });
  };
  try {
    const key = publicKey();
    if (!key) return await refuse(503, 'no_public_key', 'SENDGRID_WEBHOOK_PUBLIC_KEY is not set: no batch can be verified');
    if (Number(req.headers.get('content-length') ?? 0) > MAX_BYTES) return await refuse(413, 'too_large', `the body is over ${MAX_BYTES} bytes`);
    const body = (await readBodyCapped(req, MAX_BYTES))?.toString('utf8') ?? null;
    if (body === null) return await refuse(413, 'too_large', `the body is over ${MAX_BYTES} bytes`);
    const signature = req.headers.get(EventWebhookHeader.SIGNATURE());
    const timestamp = req.headers.get(EventWebhookHeader.TIMESTAMP());
    if (!signature || !timestamp) return await refuse(401, 'bad_signature', 'the signature headers are missing');
    const at = Number(timestamp);
    if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Date.now() / 1000 - at) > env().SENDGRID_WEBHOOK_TOLERANCE_S) {
      return await refuse(401, 'stale_timestamp', `the timestamp is more than ${env().SENDGRID_WEBHOOK_TOLERANCE_S} s from now`);
    }
    let verified = false;
    try {
      verified = verifier.verifySignature(key, body, signature, timestamp);
    } catch {
      verified = false; // a signature that does not even decode
    }
    if (!verified) return await refuse(401, 'bad_signature', 'the signature does not verify');
    let batch: unknown;
    try {
      batch = JSON.parse(body);
    } catch {
      return await refuse(400, 'malformed', 'the body is not JSON');
    }
    if (!Array.isArray(batch)) return await refuse(400, 'malformed', 'the body is not a JSON array of events');
    const stored = await inTransaction(pool, undefined, async (client) => {
      const stored = await storeEventBatch(client, batch);
      if (stored.ids.length > 0) await jobClientFor(pool).enqueue('apply-email-events', { eventIds: stored.ids }, { client });
      return stored;
    });
    return Response.json({ ok: true, ...stored.counts });
  } catch {
    // The database is away: SendGrid retries a batch that got no 2xx.
    return Response.json({ error: 'try again later' }, { status: 503 });
  }
}

import type { Pool } from '@beton/db';
import { setTimeout as sleep } from 'node:timers/promises';
import { PermanentError, TransientError } from '@beton/jobs';
import { certainlyNotAccepted, type Mailer, type OutgoingEmail } from './mailer.ts';

export interface DeliverOptions {
  /** Awaited right before the request goes out (see SendOptions.beforeRequest): the job's turn under the global rate limit. */
  beforeSend?: () => Promise<void>;
  /** The job's signal: the in-attempt wait for an unknown outcome stops at the job's timeout. */
  signal?: AbortSignal;
  /**
   * After a send whose outcome is unknown (lost ack, timeout), how long the provider's
   * activity feed may lag before "not found" can be trusted. Default: 10 s.
   */
  activitySettleMs?: number;
}

export type DeliveryResult = { sent: true; messageId: string; alreadySent: boolean };

/**
 * Exactly-once email (R7). Before sending, the delivery row for the key is consulted:
 * already sent → done without sending. The attempt is recorded before the call; success
 * stores the provider's message id. When an earlier attempt's outcome is unknown, the
 * provider is asked whether it accepted a message with this key before sending again.
 */
export async function deliverEmail(deps: { pool: Pool; mailer: Mailer }, email: OutgoingEmail, options: DeliverOptions = {}): Promise<DeliveryResult> {
  const { pool, mailer } = deps;
  const settleMs = options.activitySettleMs ?? 10_000;
  const key = email.idempotencyKey;
  const { rows } = await pool.query<{ status: string; provider_message_id: string | null; attempts: number; unknown_for_ms: number | null }>(
    `insert into email_deliveries (idempotency_key, recipient, status, attempts) values ($1, $2, 'sending', 0)
     on conflict (idempotency_key) do update set recipient = email_deliveries.recipient
     returning status, provider_message_id, attempts,
       case when outcome_unknown_since is null then null else (extract(epoch from now() - outcome_unknown_since) * 1000)::int end as unknown_for_ms`,
    [key, email.to],
  );
  const delivery = rows[0]!;
  if (delivery.status === 'sent') return { sent: true, messageId: delivery.provider_message_id ?? '', alreadySent: true };

  if (delivery.unknown_for_ms !== null) {
    const accepted = await mailer.findAccepted(key);
    if (accepted) {
      await pool.query(
        `update email_deliveries set status = 'sent', provider_message_id = $2, sent_at = now(), outcome_unknown_since = null where idempotency_key = $1`,
        [key, accepted],
      );
      return { sent: true, messageId: accepted, alreadySent: true };
    }
    if (delivery.unknown_for_ms < settleMs) {
      throw new TransientError('outcome_unknown', `the provider may still be recording an earlier attempt for ${key}; checking again later`, {
        retryAfterMs: settleMs - delivery.unknown_for_ms,
      });
    }
  }

  // Record the attempt before the call; the send's outcome is unknown until it answers.
  await pool.query(
    `update email_deliveries set status = 'sending', attempts = attempts + 1, recipient = $2, outcome_unknown_since = now() where idempotency_key = $1`,
    [key, email.to],
  );
  try {
    const messageId = await mailer.send(email, options.beforeSend ? { beforeRequest: options.beforeSend } : {});
    await pool.query(
      `update email_deliveries set status = 'sent', provider_message_id = $2, sent_at = now(), last_error = null, outcome_unknown_since = null where idempotency_key = $1`,
      [key, messageId],
    );
    return { sent: true, messageId, alreadySent: false };
  } catch (error) {
    const definite = certainlyNotAccepted(error); // a 4xx/5xx answer, or a request that never left
    await pool.query(
      `update email_deliveries set status = $3::"DeliveryStatus", last_error = $2,
              outcome_unknown_since = case when $4 then null else outcome_unknown_since end where idempotency_key = $1`,
      [key, (error as Error).message, error instanceof PermanentError ? 'failed' : 'sending', definite],
    );
    if (definite || error instanceof PermanentError) throw error;
    // The request went out and no answer came back (a lost ack, a timeout). Resolve it in this
    // attempt if the job has time left: after the activity feed's lag, ask the provider. This
    // way even the last attempt never reports a delivered email as failed.
    const accepted = await settleAndLookup(deps, key, settleMs, options.signal);
    if (accepted) return { sent: true, messageId: accepted, alreadySent: false };
    throw error;
  }
}

async function settleAndLookup(deps: { pool: Pool; mailer: Mailer }, key: string, settleMs: number, signal: AbortSignal | undefined): Promise<string | null> {
  try {
    await sleep(settleMs, undefined, signal ? { signal } : {});
    const accepted = await deps.mailer.findAccepted(key);
    if (accepted) {
      await deps.pool.query(
        `update email_deliveries set status = 'sent', provider_message_id = $2, sent_at = now(), outcome_unknown_since = null where idempotency_key = $1`,
        [key, accepted],
      );
    } else {
      // Not accepted after the feed's lag: the next attempt may send without asking again.
      await deps.pool.query(`update email_deliveries set outcome_unknown_since = null where idempotency_key = $1`, [key]);
    }
    return accepted;
  } catch {
    return null; // no time left or the lookup failed: the next attempt asks again
  }
}

/**
 * Bulk slips as SendGrid scheduled sends (docs/exactly-once.md, "Resend only on proof"): the
 * account's bulk sends of one time window share one batch (`POST /v3/mail/batch`) and one
 * `send_at` = the window's end + a lead. Until the batch's cancel cutoff (SendGrid: 10 minutes
 * before send_at) the batch can still be cancelled, and a cancelled batch's messages are
 * discarded at send_at: that is the proof that lets a send whose answer was lost be sent again.
 *
 *   window [s, e) ── sends join batch B(s), send_at = e + lead
 *   e + quiet      ── every send of the window has its answer or is an unknown outcome
 *   send_at − cutoff − skew ── the last moment B may be cancelled (the settle job decides before)
 *   send_at        ── SendGrid sends B's messages (or discards them: B cancelled)
 */
import { inTransaction, type Pool } from '@beton/db';
import { TransientError } from '@beton/jobs/client';
import type { Mailer } from './mailer.ts';

export interface SchedulingSettings {
  /**
   * The window whose bulk sends share one batch, ms (EMAIL_BATCH_WINDOW_MS). Default: 120000: a
   * cancellation is held from its decision to its deletion (cutoff + 2 × skew + 3 settle runs,
   * about 14 minutes), and SendGrid holds at most 10 at once, so no more than 9 windows may end in
   * that time even if every one of them needs cancelling. Larger windows cost more resends per
   * cancellation (every slip of the window).
   */
  windowMs: number;
  /** send_at = the window's end + this, ms (EMAIL_SEND_LEAD_MS). Default: 900000 (15 minutes). */
  leadMs: number;
  /** The provider's cancel cutoff before send_at, ms (EMAIL_CANCEL_CUTOFF_MS). Default: 600000 (SendGrid: 10 minutes). */
  cancelCutoffMs: number;
  /** How far the provider's clock may be ahead of ours, ms (EMAIL_CLOCK_SKEW_MS). Default: 30000. */
  clockSkewMs: number;
  /**
   * After a window's end, how long until every send of it has its answer or is an unknown outcome
   * (the email job's timeout, which bounds a send from taking its batch to its request's end, plus
   * a margin), ms. Default: 45000.
   */
  quietMs: number;
  /** How often the settle job runs, ms: it decides a window's fate at least two runs before its cutoff. Default: 60000. */
  settleEveryMs: number;
}

/** Batches SendGrid lets be paused or cancelled at one time ("Cancel Scheduled Sends"). */
export const MAX_HELD_CANCELLATIONS = 10;
/** Settle runs between a batch's decision and its cancel deadline (a run may be late or skipped). */
export const DECISION_RUNS = 3;

export const DEFAULT_SCHEDULING: SchedulingSettings = {
  windowMs: 120_000,
  leadMs: 15 * 60_000,
  cancelCutoffMs: 10 * 60_000,
  clockSkewMs: 30_000,
  quietMs: 45_000,
  settleEveryMs: 60_000,
};

/**
 * Why the settings cannot work, or null: a window's fate must be decidable after its quiet time
 * and DECISION_RUNS settle runs before the cutoff (with the clock skew allowed for), and the
 * cancellations held at once (each from its decision to its deletion) must stay under SendGrid's 10.
 */
export function schedulingProblem(s: SchedulingSettings): string | null {
  const room = s.leadMs - s.cancelCutoffMs - s.clockSkewMs - s.quietMs - DECISION_RUNS * s.settleEveryMs;
  if (room < 0)
    return `EMAIL_SEND_LEAD_MS (${s.leadMs}) must exceed the cancel cutoff (${s.cancelCutoffMs}) + the clock skew (${s.clockSkewMs}) + ${s.quietMs} ms for the window's last answers + ${DECISION_RUNS} settle runs (${DECISION_RUNS * s.settleEveryMs}): ${-room} ms short`;
  const held = Math.ceil(cancellationHeldMs(s) / s.windowMs) + 1;
  if (held > MAX_HELD_CANCELLATIONS)
    return `EMAIL_BATCH_WINDOW_MS (${s.windowMs}) is too short: a cancellation is held ${cancellationHeldMs(s)} ms, so up to ${held} windows could need one at once; SendGrid holds ${MAX_HELD_CANCELLATIONS}`;
  return null;
}

/** How long a cancellation is held, at most: decided DECISION_RUNS runs before its deadline, deleted a skew and a run after its send_at. */
export function cancellationHeldMs(s: SchedulingSettings): number {
  return s.cancelCutoffMs + 2 * s.clockSkewMs + (DECISION_RUNS + 1) * s.settleEveryMs;
}

/** The last moment a batch with this send_at may be cancelled, by our clock. */
export function cancelDeadline(sendAt: Date, s: SchedulingSettings): number {
  return sendAt.getTime() - s.cancelCutoffMs - s.clockSkewMs;
}

export interface ScheduledSlot {
  batchId: string;
  sendAt: Date;
}

/**
 * The batch of the current window, made once for the whole account (the first send of a window
 * creates it under the window's row lock; the others read it). Cached per process: a window's
 * batch never changes once made.
 */
export function createBatchSource(deps: { pool: Pool; mailer: Mailer }, settings: SchedulingSettings) {
  const cache = new Map<number, Promise<ScheduledSlot>>();

  async function make(windowStart: number): Promise<ScheduledSlot> {
    const start = new Date(windowStart);
    const sendAt = new Date(windowStart + settings.windowMs + settings.leadMs);
    await deps.pool.query(`insert into email_batches (window_start, send_at) values ($1, $2) on conflict do nothing`, [start, sendAt]);
    return inTransaction(deps.pool, undefined, async (client) => {
      const { rows } = await client.query<{ batch_id: string | null; send_at: Date; state: string }>(
        `select batch_id, send_at, state from email_batches where window_start = $1 for update`,
        [start],
      );
      const row = rows[0]!;
      if (row.state !== 'open') throw new TransientError('batch_closed', `the batch of the window at ${start.toISOString()} is ${row.state}`);
      if (row.batch_id) return { batchId: row.batch_id, sendAt: row.send_at };
      const batchId = await deps.mailer.createBatch();
      await client.query(`update email_batches set batch_id = $2 where window_start = $1`, [start, batchId]);
      return { batchId, sendAt: row.send_at };
    });
  }

  return {
    /** The batch a bulk send that leaves now joins. */
    current(now = Date.now()): Promise<ScheduledSlot> {
      const windowStart = Math.floor(now / settings.windowMs) * settings.windowMs;
      let slot = cache.get(windowStart);
      if (!slot) {
        slot = make(windowStart);
        cache.set(windowStart, slot);
        slot.catch(() => cache.delete(windowStart));
        for (const k of cache.keys()) if (k < windowStart - 10 * settings.windowMs) cache.delete(k);
      }
      return slot;
    },
  };
}
export type BatchSource = ReturnType<typeof createBatchSource>;

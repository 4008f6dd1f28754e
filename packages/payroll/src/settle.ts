/**
 * Settling the sends whose answer was lost (docs/exactly-once.md, "Resend only on proof"). Run by
 * the settle-email-outcomes job every minute, one run at a time for the whole deployment:
 *
 * 1. every send marked "outcome unknown" that no process answered within the quiet time (its
 *    worker was killed) is recorded as an unknown outcome, next to those the senders recorded;
 * 2. evidence settles them: an Event Webhook event of the send (applied to its delivery row by
 *    apply-email-events, only events of the send's own batch), or an Email Activity lookup —
 *    the unknowns take the shared lookup turns oldest-looked-up first, 50 recipients a query, so
 *    none is forgotten while others are looked up;
 * 3. each closed window's batch is decided before its cancel cutoff: every unknown of it settled →
 *    sealed (SendGrid sends it at send_at); otherwise cancelled — SendGrid discards a cancelled
 *    batch's messages, the proof — and every email of the batch is sent again under a new batch
 *    (`resent_on_proof`). A batch whose cutoff passes with unknowns (the 10 cancellations held
 *    at once, the provider unreachable) is uncancellable: its unknowns become unconfirmed;
 * 4. an unknown with no batch to cancel (an interactive send) that evidence does not settle is
 *    unconfirmed: a person decides (actions.ts, resendUnconfirmed), never a timer.
 */
import { inTransaction, type Pool, type PoolClient } from '@beton/db';
import { ACTIVITY_QUERY_SIZE, type ActivityLookup } from './activity.ts';
import type { PayrollJobClient } from './jobs/index.ts';
import { slipPayload } from './jobs/slip-payload.ts';
import type { Mailer } from './mailer.ts';
import { cancelDeadline, DECISION_RUNS, type SchedulingSettings } from './scheduling.ts';

export interface SettleDeps {
  pool: Pool;
  mailer: Mailer;
  jobs: PayrollJobClient;
  /** The Email Activity API, when EMAIL_ACTIVITY_API is on. */
  activity?: ActivityLookup | undefined;
}

export interface SettleOptions {
  scheduling: SchedulingSettings;
  /** The job's signal. */
  signal?: AbortSignal;
  /** How long this run may spend waiting for Activity lookup turns, ms. Default: 30000. */
  lookupBudgetMs?: number;
  /** Our clock (tests). Default: Date.now(). */
  now?: () => number;
}

export interface SettleResult {
  collected: number;
  settledByEvidence: number;
  lookups: number;
  sealed: number;
  cancelled: number;
  resentOnProof: number;
  uncancellable: number;
  /** Unknown outcomes no batch can settle any more: a person decides. */
  unconfirmed: number;
  /** Unknown outcomes still open (including those waiting for their batch's decision). */
  open: number;
  notes: string[];
}

export async function settleEmailOutcomes(deps: SettleDeps, options: SettleOptions): Promise<SettleResult> {
  const s = options.scheduling;
  const now = options.now ?? Date.now;
  const r: SettleResult = {
    collected: 0,
    settledByEvidence: 0,
    lookups: 0,
    sealed: 0,
    cancelled: 0,
    resentOnProof: 0,
    uncancellable: 0,
    unconfirmed: 0,
    open: 0,
    notes: [],
  };

  r.collected = await collectAbandonedMarks(deps.pool, s.quietMs);
  r.settledByEvidence += await settleByEvidence(deps.pool);
  if (deps.activity) {
    const looked = await lookUpUnknowns(deps, options.lookupBudgetMs ?? 30_000, options.signal);
    r.lookups = looked.queries;
    r.settledByEvidence += looked.settled;
  }
  r.settledByEvidence += await settleByEvidence(deps.pool);
  await freeCancellations(deps, s, now, r);
  await decideBatches(deps, s, now, r, options.signal);

  const { rows } = await deps.pool.query<{ open: number; unconfirmed: number }>(
    `select count(*)::int as open,
            count(*) filter (where b.state is distinct from 'open')::int as unconfirmed
     from email_unknown_outcomes u left join email_batches b on b.batch_id = u.batch_id
     where u.settled_at is null`,
  );
  r.open = rows[0]!.open;
  r.unconfirmed = rows[0]!.unconfirmed;
  return r;
}

/** Step 1: marks no process answered within the quiet time (a killed worker) become unknown outcomes. */
async function collectAbandonedMarks(pool: Pool, quietMs: number): Promise<number> {
  const { rowCount } = await pool.query(
    // (A settled row is reopened by a mark made after it was settled: the send made again since.)
    `insert into email_unknown_outcomes (idempotency_key, recipient, batch_id, recorded_at, evidence)
     select d.idempotency_key, d.recipient, d.batch_id, d.outcome_unknown_since, 'no answer recorded: its worker stopped with the request possibly on the wire'
     from email_deliveries d
     where d.outcome_unknown_since is not null and d.status = 'sending' and d.outcome_unknown_since < now() - make_interval(secs => $1::float8 / 1000)
     on conflict (idempotency_key) do update set recipient = excluded.recipient, batch_id = excluded.batch_id, recorded_at = excluded.recorded_at,
       lookups = 0, last_looked_up_at = null, lookup_error = null, settled_at = null, settled_by = null, evidence = excluded.evidence
     where email_unknown_outcomes.settled_at is not null and email_unknown_outcomes.settled_at < excluded.recorded_at`,
    [quietMs],
  );
  return rowCount ?? 0;
}

/** Step 2: unknowns whose delivery the webhook's events (of the same send) or a lookup showed accepted. */
async function settleByEvidence(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(
    `update email_unknown_outcomes u set settled_at = now(), settled_by = 'evidence',
       evidence = 'the provider accepted it: ' || coalesce('event ' || d.event_state, 'message ' || d.provider_message_id, 'recorded accepted')
     from email_deliveries d
     where d.idempotency_key = u.idempotency_key and u.settled_at is null
       and d.batch_id is not distinct from u.batch_id and (d.status = 'sent' or d.event_state is not null)`,
  );
  return rowCount ?? 0;
}

/** Step 2b: Activity lookups, oldest looked-up first, one query of up to 50 recipients per turn. */
async function lookUpUnknowns(deps: SettleDeps, budgetMs: number, signal?: AbortSignal): Promise<{ queries: number; settled: number }> {
  const until = performance.now() + budgetMs;
  let queries = 0;
  let settled = 0;
  const seenThisRun = new Set<string>();
  while (performance.now() < until && !signal?.aborted) {
    const { rows } = await deps.pool.query<{ key: string; recipient: string; batch_id: string | null }>(
      `select idempotency_key as key, recipient, batch_id from email_unknown_outcomes where settled_at is null
       order by last_looked_up_at nulls first, recorded_at limit 500`,
    );
    const batch: typeof rows = [];
    const recipients = new Set<string>();
    for (const row of rows) {
      const to = row.recipient.toLowerCase();
      if (seenThisRun.has(row.key) || recipients.has(to)) continue;
      recipients.add(to);
      batch.push(row);
      if (batch.length >= ACTIVITY_QUERY_SIZE) break;
    }
    if (batch.length === 0) break;
    for (const b of batch) seenThisRun.add(b.key);
    const keys = batch.map((b) => b.key);
    try {
      const bounded = AbortSignal.any([...(signal ? [signal] : []), AbortSignal.timeout(Math.max(0, Math.floor(until - performance.now())))]);
      const found = await deps.activity!.lookup(
        batch.map((b) => ({ key: b.key, to: b.recipient, batchId: b.batch_id })),
        bounded,
      );
      queries++;
      const foundKeys = [...found.keys()];
      if (foundKeys.length > 0) {
        await deps.pool.query(
          `update email_deliveries d set status = 'sent', provider_message_id = coalesce(d.provider_message_id, f.id), sent_at = coalesce(d.sent_at, now()),
                  outcome_unknown_since = null
           from unnest($1::text[], $2::text[]) as f(key, id) where d.idempotency_key = f.key and d.status = 'sending'`,
          [foundKeys, foundKeys.map((k) => found.get(k)!)],
        );
        const { rowCount } = await deps.pool.query(
          `update email_unknown_outcomes set settled_at = now(), settled_by = 'activity', evidence = 'the Email Activity API lists it'
           where idempotency_key = any($1::text[]) and settled_at is null`,
          [foundKeys],
        );
        settled += rowCount ?? 0;
      }
      await deps.pool.query(
        `update email_unknown_outcomes set lookups = lookups + 1, last_looked_up_at = now(), lookup_error = null where idempotency_key = any($1::text[])`,
        [keys],
      );
    } catch (error) {
      if (signal?.aborted || performance.now() >= until) break; // no turn in time: not a lookup
      queries++;
      await deps.pool.query(
        `update email_unknown_outcomes set lookups = lookups + 1, last_looked_up_at = now(), lookup_error = $2 where idempotency_key = any($1::text[])`,
        [keys, String((error as Error).message).slice(0, 300)],
      );
    }
  }
  return { queries, settled };
}

/** Step 3: each closed window's batch, sealed, cancelled (and sent again) or uncancellable. */
async function decideBatches(deps: SettleDeps, s: SchedulingSettings, now: () => number, r: SettleResult, signal?: AbortSignal): Promise<void> {
  const { rows } = await deps.pool.query<{ window_start: Date; batch_id: string | null; send_at: Date; unknown: number }>(
    `select b.window_start, b.batch_id, b.send_at,
            (select count(*)::int from email_unknown_outcomes u where u.batch_id = b.batch_id and u.settled_at is null)
          + (select count(*)::int from email_deliveries d where d.batch_id = b.batch_id and d.status = 'sending' and d.outcome_unknown_since is not null
               and not exists (select 1 from email_unknown_outcomes u where u.idempotency_key = d.idempotency_key and u.settled_at is null)) as unknown
     from email_batches b
     where b.state = 'open' and b.window_start + make_interval(secs => $1::float8 / 1000) <= $2::timestamptz
     order by b.send_at`,
    [(s.windowMs + s.quietMs) / 1, new Date(now())],
  );
  for (const b of rows) {
    if (signal?.aborted) return;
    if (b.batch_id === null || b.unknown === 0) {
      await deps.pool.query(`update email_batches set state = 'sealed', settled_at = now() where window_start = $1 and state = 'open'`, [b.window_start]);
      r.sealed++;
      continue;
    }
    const deadline = cancelDeadline(b.send_at, s);
    if (now() >= deadline) {
      await markUncancellable(deps.pool, b.window_start, 'its cancel cutoff passed with outcomes unknown');
      r.uncancellable++;
      continue;
    }
    // Evidence may still come: the batch is cancelled at the last settle runs that are surely
    // before its cutoff (DECISION_RUNS runs ahead), not at the first unknown.
    if (now() < deadline - DECISION_RUNS * s.settleEveryMs) continue;
    const outcome = await cancelWithRoom(deps, s, b.batch_id, now, r);
    if (outcome === 'cancelled') {
      r.cancelled++;
      r.resentOnProof += await resendCancelledBatch(deps, b.batch_id);
    } else if (outcome !== 'retry') {
      await markUncancellable(deps.pool, b.window_start, outcome.refused);
      r.uncancellable++;
    } else r.notes.push(`batch ${b.batch_id}: cancellation not confirmed yet; tried again next run`);
  }
}

async function markUncancellable(pool: Pool, windowStart: Date, why: string): Promise<void> {
  await pool.query(`update email_batches set state = 'uncancellable', settled_at = now(), note = $2 where window_start = $1 and state = 'open'`, [
    windowStart,
    why,
  ]);
}

/**
 * Cancels a batch; when the provider holds 10 cancellations already, frees those whose send_at
 * passed and tries once more. 'retry': no definite answer (the next run asks again).
 */
/** How a cancellation went: done, to be tried again next run, or refused for good (why). */
type CancelResult = 'cancelled' | 'retry' | { refused: string };

async function cancelWithRoom(deps: SettleDeps, s: SchedulingSettings, batchId: string, now: () => number, r: SettleResult): Promise<CancelResult> {
  for (let tries = 0; tries < 2; tries++) {
    let outcome;
    try {
      outcome = await deps.mailer.cancelBatch(batchId);
    } catch (error) {
      r.notes.push(`batch ${batchId}: ${(error as Error).message}`);
      return 'retry';
    }
    if (outcome.cancelled) return 'cancelled';
    if (/max limit/i.test(outcome.refused) && tries === 0) {
      if ((await freeCancellations(deps, s, now, r)) > 0) continue;
      r.notes.push(`batch ${batchId}: ${outcome.refused}`);
      return 'retry'; // the held cancellations' send_at comes: room is made before this cutoff, or not
    }
    return { refused: `the provider refused its cancellation: ${outcome.refused}` };
  }
  return 'retry';
}

/**
 * The proof: the batch is cancelled, so SendGrid discards all its messages. Every email of it is
 * reset and sent again (a new send-slip-email job, key `…:email:proof-N`) under a new batch, in
 * one transaction with the batch's state.
 */
async function resendCancelledBatch(deps: SettleDeps, batchId: string): Promise<number> {
  return inTransaction(deps.pool, undefined, async (client) => {
    const { rows } = await client.query<{ key: string; n: number; payload: unknown }>(
      `with b as (update email_batches set state = 'cancelled', settled_at = now() where batch_id = $1 and state = 'open' returning batch_id)
       , d as (
         update email_deliveries set status = 'sending', outcome_unknown_since = null, request_left_at = null, batch_id = null, send_at = null,
                provider_message_id = null, sent_at = null, event_state = null, event_reason = null, event_at = null,
                resent_on_proof = resent_on_proof + 1, last_error = 'its batch was cancelled (SendGrid discards it): sent again'
         where batch_id = $1 and (status = 'sent' or outcome_unknown_since is not null) and exists (select 1 from b)
         returning idempotency_key, resent_on_proof)
       , u as (update email_unknown_outcomes set settled_at = now(), settled_by = 'cancelled',
                 evidence = 'its batch was cancelled: SendGrid discards the first send; sent again'
               where batch_id = $1 and settled_at is null and exists (select 1 from b))
       select d.idempotency_key as key, d.resent_on_proof as n, j.payload
       from d left join jobs j on j.idempotency_key = d.idempotency_key || ':email' and j.task_name = 'send-slip-email'`,
      [batchId],
    );
    for (const row of rows) {
      const payload = slipPayload.safeParse(row.payload);
      if (!payload.success) {
        // Only slips go out in batches; a row without its job (purged?) is left for a person.
        await recordStranded(client, row.key);
        continue;
      }
      await deps.jobs.enqueue('send-slip-email', payload.data, { idempotencyKey: `${row.key}:email:proof-${row.n}`, client });
    }
    return rows.length;
  });
}

async function recordStranded(client: PoolClient, key: string): Promise<void> {
  await client.query(
    `insert into email_unknown_outcomes (idempotency_key, recipient, batch_id, evidence)
     select idempotency_key, recipient, null, 'its batch was cancelled and its job is gone: send it again by hand' from email_deliveries where idempotency_key = $1
     on conflict (idempotency_key) do update set settled_at = null, settled_by = null, batch_id = null, evidence = excluded.evidence`,
    [key],
  );
}

/**
 * Deletes the cancellations whose send_at passed (by the provider's clock too: a skew after it):
 * their messages are discarded, and SendGrid holds at most 10 cancellations at once.
 */
async function freeCancellations(deps: SettleDeps, s: SchedulingSettings, now: () => number, r: SettleResult): Promise<number> {
  const { rows } = await deps.pool.query<{ batch_id: string }>(
    `select batch_id from email_batches where state = 'cancelled' and cancel_deleted_at is null and send_at < $1::timestamptz order by send_at limit 20`,
    [new Date(now() - s.clockSkewMs)],
  );
  let freed = 0;
  for (const { batch_id } of rows) {
    try {
      await deps.mailer.deleteCancellation(batch_id);
      await deps.pool.query(`update email_batches set cancel_deleted_at = now() where batch_id = $1`, [batch_id]);
      freed++;
    } catch (error) {
      r.notes.push(`cancellation of ${batch_id} not deleted: ${(error as Error).message}`);
    }
  }
  return freed;
}

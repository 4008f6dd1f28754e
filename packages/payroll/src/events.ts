/**
 * Delivery truth from SendGrid's Event Webhook (issue 16, R12). A verified batch is stored once
 * per event (`sg_event_id`, SendGrid's id "that you can use for deduplication purposes"), only
 * for keys of ours (our idempotency key travels as the custom arg `idempotency_key`, which
 * SendGrid adds to every event of the message); the apply-email-events job then moves each
 * key's state forward only: events come late, duplicated and out of order, so a state is
 * replaced only by one of a higher rank (processed < deferred < delivered < bounced = dropped
 * < spam report; a bounce after delivered is an asynchronous bounce). Any event for a key
 * also proves the provider accepted it: an unknown send outcome is resolved by it.
 * Imported by the web app (no mailer, no PDF code here).
 */
import type { Pool, PoolClient } from '@beton/db';
import { z } from 'zod';
import type { WebhookOutcome } from './webhook-outcomes.ts';
import { BATCH_ARG } from './batch-arg.ts';

/** Our delivery states, by rank, and the SendGrid event each comes from. */
export const DELIVERY_STATES = ['processed', 'deferred', 'delivered', 'bounced', 'dropped', 'spam_report'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
export const DELIVERY_STATE_RANK: Record<DeliveryState, number> = { processed: 1, deferred: 2, delivered: 3, bounced: 4, dropped: 4, spam_report: 5 };
const FROM_SENDGRID: Record<string, DeliveryState> = {
  processed: 'processed',
  deferred: 'deferred',
  delivered: 'delivered',
  bounce: 'bounced',
  dropped: 'dropped',
  spamreport: 'spam_report',
};
/** States after which nothing more is expected: "received" or "not received". */
export const FINAL_STATES: readonly DeliveryState[] = ['delivered', 'bounced', 'dropped', 'spam_report'];

export type { WebhookOutcome } from './webhook-outcomes.ts';

const eventSchema = z.object({
  sg_event_id: z.string().min(1).max(100),
  event: z.string().min(1),
  email: z.string(),
  timestamp: z.number().int().nonnegative(),
  idempotency_key: z.string().min(1).optional(),
  reason: z.string().optional(),
  response: z.string().optional(),
});

export interface StoredBatch {
  /** sg_event_ids newly stored (to apply). */
  ids: string[];
  counts: Partial<Record<WebhookOutcome, number>>;
}

/** Requests refused whole: the webhook's failures (its health, shown to the admin). */
const FAILURES: readonly WebhookOutcome[] = ['bad_signature', 'stale_timestamp', 'too_large', 'malformed', 'no_public_key'];

/** Adds to the webhook's counters (shared by every web replica). */
export async function countWebhook(db: Pool | PoolClient, counts: Partial<Record<WebhookOutcome, number>>): Promise<void> {
  const entries = Object.entries(counts).filter(([, n]) => (n ?? 0) > 0);
  if (entries.length === 0) return;
  const failed = entries.filter(([k]) => FAILURES.includes(k as WebhookOutcome));
  if (failed.length > 0)
    await db.query(
      `insert into email_webhook_health (id, failures, last_failure_at, last_failure) values (1, $1, now(), $2)
       on conflict (id) do update set failures = email_webhook_health.failures + excluded.failures, last_failure_at = now(), last_failure = excluded.last_failure`,
      [failed.reduce((a, [, n]) => a + (n ?? 0), 0), failed.map(([k]) => k).join(', ')],
    );
  await db.query(
    `insert into email_webhook_counts (outcome, n) select * from unnest($1::text[], $2::bigint[])
     on conflict (outcome) do update set n = email_webhook_counts.n + excluded.n`,
    [entries.map(([k]) => k), entries.map(([, n]) => n)],
  );
}

/** The webhook's counters. */
export async function webhookCounts(db: Pool): Promise<Record<string, number>> {
  const { rows } = await db.query<{ outcome: string; n: string }>(`select outcome, n from email_webhook_counts`);
  return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
}

/**
 * Stores a verified batch (a parsed JSON array): each delivery event of a key of ours once.
 * Engagement events (open, click, unsubscribe, …) and unknown types are counted and ignored;
 * so are events without our key or for a key we never sent, and malformed entries.
 */
export async function storeEventBatch(db: Pool | PoolClient, batch: unknown[]): Promise<StoredBatch> {
  const counts: Partial<Record<WebhookOutcome, number>> = {};
  const add = (o: WebhookOutcome, n = 1) => (counts[o] = (counts[o] ?? 0) + n);
  const rows: Array<{ id: string; key: string; event: string; email: string; at: string; reason: string | null; payload: string }> = [];
  const seen = new Set<string>();
  for (const raw of batch) {
    const parsed = eventSchema.safeParse(raw);
    if (!parsed.success) {
      add('malformed_event');
      continue;
    }
    const e = parsed.data;
    if (!FROM_SENDGRID[e.event]) {
      add('unknown_event');
      continue;
    }
    if (!e.idempotency_key) {
      add('unknown_key');
      continue;
    }
    if (seen.has(e.sg_event_id)) {
      add('duplicate');
      continue;
    }
    seen.add(e.sg_event_id);
    rows.push({
      id: e.sg_event_id,
      key: e.idempotency_key,
      event: e.event,
      email: e.email,
      at: new Date(e.timestamp * 1000).toISOString(),
      reason: e.reason ?? e.response ?? null,
      payload: JSON.stringify(raw),
    });
  }
  let ids: string[] = [];
  if (rows.length > 0) {
    const { rows: inserted } = await db.query<{ sg_event_id: string; known: boolean }>(
      `with ev as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::jsonb[])
                   as e(id, key, event, email, at, reason, payload))
       , known as (select ev.* from ev join email_deliveries d on d.idempotency_key = ev.key)
       , ins as (insert into email_events (sg_event_id, idempotency_key, event, email, occurred_at, reason, payload)
                 select id, key, event, email, at, reason, payload from known on conflict (sg_event_id) do nothing returning sg_event_id)
       select ev.id as sg_event_id, exists (select 1 from known where known.id = ev.id) as known,
              exists (select 1 from ins where ins.sg_event_id = ev.id) as stored
       from ev`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.key),
        rows.map((r) => r.event),
        rows.map((r) => r.email),
        rows.map((r) => r.at),
        rows.map((r) => r.reason),
        rows.map((r) => r.payload),
      ],
    );
    for (const r of inserted as Array<{ sg_event_id: string; known: boolean; stored: boolean }>) {
      if (!r.known) add('unknown_key');
      else if (r.stored) {
        add('stored');
        ids.push(r.sg_event_id);
      } else add('duplicate');
    }
  }
  ids = [...new Set(ids)];
  await countWebhook(db, counts);
  if (rows.length > 0) {
    // The webhook's health: when a batch last came, and how late its oldest event was.
    const times = rows.map((r) => Date.parse(r.at));
    await db.query(
      `insert into email_webhook_health (id, last_received_at, last_event_at, last_lag_ms, max_lag_ms) values (1, now(), $1, $2, $2)
       on conflict (id) do update set last_received_at = now(), last_event_at = greatest(email_webhook_health.last_event_at, excluded.last_event_at),
         last_lag_ms = excluded.last_lag_ms, max_lag_ms = greatest(email_webhook_health.max_lag_ms, excluded.max_lag_ms)`,
      [new Date(Math.max(...times)), Math.max(0, Date.now() - Math.min(...times))],
    );
  }
  return { ids, counts };
}

/** The rank of a state column or expression, in SQL (one source: DELIVERY_STATE_RANK). */
const rankSql = (expr: string) =>
  `case ${expr} ${Object.entries(DELIVERY_STATE_RANK)
    .map(([k, v]) => `when '${k}' then ${v}`)
    .join(' ')} else 0 end`;
const stateSql = (expr: string) =>
  `case ${expr} ${Object.entries(FROM_SENDGRID)
    .map(([k, v]) => `when '${k}' then '${v}'`)
    .join(' ')} end`;

/**
 * Applies stored events to their deliveries: the highest-ranked event of each key wins if it
 * outranks the key's state; every event marks its key accepted (`sent`, no unknown outcome).
 * Idempotent: applying the same events again changes nothing.
 */
export async function applyEmailEvents(db: Pool | PoolClient, ids: readonly string[]): Promise<{ applied: number; moved: number }> {
  if (ids.length === 0) return { applied: 0, moved: 0 };
  const { rows } = await db.query<{ applied: number; moved: number }>(
    // Only events of the delivery's current send: a scheduled send's events carry its batch
    // (BATCH_ARG), and those of a cancelled batch's copy, which SendGrid discards, are not its.
    `with ev as (select e.idempotency_key as key, e.occurred_at, e.reason, ${stateSql('e.event')} as s
                 from email_events e join email_deliveries d0 on d0.idempotency_key = e.idempotency_key
                 where e.sg_event_id = any($1::text[]) and (e.payload->>'${BATCH_ARG}' is null or e.payload->>'${BATCH_ARG}' = d0.batch_id))
     , best as (select distinct on (key) key, s, reason, occurred_at, ${rankSql('s')} as rank from ev order by key, ${rankSql('s')} desc, occurred_at desc)
     , cur as (select d.idempotency_key as key, ${rankSql('d.event_state')} as rank from email_deliveries d join best on best.key = d.idempotency_key for update of d)
     , upd as (
       update email_deliveries d set
         event_state = case when cur.rank < best.rank then best.s else d.event_state end,
         event_reason = case when cur.rank < best.rank then best.reason else d.event_reason end,
         event_at = case when cur.rank < best.rank then best.occurred_at else d.event_at end,
         status = 'sent', outcome_unknown_since = null, sent_at = coalesce(d.sent_at, best.occurred_at)
       from best join cur on cur.key = best.key where d.idempotency_key = best.key
       returning cur.rank < best.rank as moved)
     , mark as (update email_events set applied_at = now() where sg_event_id = any($1::text[]) and applied_at is null returning 1)
     select (select count(*)::int from mark) as applied, (select count(*)::int from upd where moved) as moved`,
    [ids],
  );
  return rows[0] ?? { applied: 0, moved: 0 };
}

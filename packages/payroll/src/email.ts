import { ASYNC_COMMIT, prepared, type Pool } from '@beton/db';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeferError, retryOnConnectionError, TransientError } from '@beton/jobs/client';
import type { ActivityLookup } from './activity.ts';
import { certainlyNotAccepted, type Mailer, type OutgoingEmail } from './mailer.ts';

/**
 * How long after its request left the evidence that the provider accepted an email may take to
 * arrive, by default. SendGrid's Event Webhook posts a server's events "every 30 seconds or when
 * the batch size reaches 768 kilobytes" and retries a POST that got no 2xx "at increasing
 * intervals for up to 24 hours"; the Email Activity feed lags by an undocumented delay. Five
 * minutes is ten of those 30-second batches: a webhook that is down for longer than that around
 * an ambiguous send makes the policy below resend it (counted as a possible duplicate).
 */
export const DEFAULT_SETTLE_MS = 300_000;

export interface DeliverOptions {
  /**
   * The job's turn under the global rate limit (HandlerContext.rateLimit), awaited before the
   * unknown mark; awaited again (a new turn) when the mark and the one-slip check made the turn
   * late (`turnOnTime`).
   */
  beforeSend?: () => Promise<void>;
  /** Whether the turn beforeSend took is still on time (HandlerContext.rateTurnOnTime). Default: always. */
  turnOnTime?: () => boolean;
  /**
   * Awaited once this attempt is recorded as possibly accepted (its outcome unknown), right
   * before its request leaves: a check that must see every other attempt that may send, as
   * theirs must see this one (one-slip.ts: announce, then look). Throwing there sends nothing
   * and clears the unknown outcome.
   */
  announced?: () => Promise<void>;
  /** The job's signal: aborted at its timeout and when it is handed back. */
  signal?: AbortSignal;
  /** The attempt's time left (HandlerContext.timeLeftMs): a request leaves only if its whole timeout fits. */
  timeLeftMs?: () => number;
  /** Keeps the job from being handed back on shutdown while its request is on the wire (HandlerContext.hold). */
  hold?: () => () => void;
  /**
   * The provider's lag: how long after a request left the evidence of its acceptance (the Event
   * Webhook's first event for the key, or the Activity API) may take. The settle window of an
   * unknown outcome is the request timeout plus this, from when the request left. Default:
   * DEFAULT_SETTLE_MS.
   */
  settleMs?: number;
  /** How long an attempt waits in place for that evidence before it defers the job. Default: 10000. */
  evidenceWaitMs?: number;
  /** How often a deferred job looks again before its window ends. Default: 15000. */
  recheckMs?: number;
}

export interface DeliveryDeps {
  pool: Pool;
  mailer: Mailer;
  /** The Email Activity API, when EMAIL_ACTIVITY_API is on (optional: the webhook is the truth). */
  activity?: ActivityLookup | undefined;
}

/** What the email is about, for HR's counts and lists. */
export interface EmailLinks {
  payrollRunId?: string | undefined;
  companyId?: string | undefined;
  employeeId?: number | undefined;
}

export type DeliveryResult = {
  sent: true;
  messageId: string;
  alreadySent: boolean;
  /** Sent again after an unknown outcome found no evidence within the settle window: maybe a duplicate. */
  resentAfterUnknown?: boolean;
};

interface DeliveryRow {
  status: string;
  /** The address of the row's last attempt: the one an unknown outcome's request went to. */
  recipient: string;
  provider_message_id: string | null;
  event_state: string | null;
  unknown: boolean;
  /** ms since the last request left, by the database's clock; null if not recorded. */
  left_age_ms: number | null;
}

/**
 * Exactly-once email (R7, issue 16). The delivery row of the key is consulted first: sent, or
 * any Event Webhook event for the key (the provider has it) → done without sending. A send
 * records its attempt before it waits for its turn, marks the outcome unknown right before the
 * request may leave (after the rate limit's place) and, once the request is answered, records
 * the outcome. When the
 * request left and no answer came (a cut connection, a timeout), the outcome is unknown and
 * nothing is sent again until either evidence arrives — the webhook's first event for the key
 * (applied by the apply-email-events job), or the Activity API when enabled — or the settle
 * window (request timeout + settleMs, measured from when the request actually left) passes
 * with none: then, and only then, the policy resends it and counts it as a possible duplicate
 * (`resent_after_unknown`, on the admin's Queues page). A "not found" never clears the unknown
 * outcome; meanwhile the job defers (DeferError: no attempt used).
 */
export async function deliverEmail(deps: DeliveryDeps, email: OutgoingEmail & { links?: EmailLinks }, options: DeliverOptions = {}): Promise<DeliveryResult> {
  const { pool, mailer } = deps;
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const windowMs = mailer.requestTimeoutMs + settleMs;
  const recheckMs = options.recheckMs ?? 15_000;
  const key = email.idempotencyKey;
  const links = email.links ?? {};
  // A new key's row is inserted with its first attempt already recorded (what the "record the
  // attempt" update below does for an existing row): one statement for the common case (issue
  // 23). An existing row is returned as it stands (xmax = 0 only on the row this statement inserted).
  // Committed asynchronously (@beton/db ASYNC_COMMIT), as is the "sent" below: the unknown mark
  // before the request is a synchronous commit, which makes this one durable before anything is
  // sent; lost in a server crash, the row is made again by the job's next attempt.
  const { rows } = await pool.query<DeliveryRow & { inserted: boolean }>({
    ...prepared(
      `insert into email_deliveries (idempotency_key, recipient, status, attempts, outcome_unknown_since, payroll_run_id, company_id, employee_id)
       select $1, $2, 'sending', 1, null, $3, $4, $5 from ${ASYNC_COMMIT}
       on conflict (idempotency_key) do update set recipient = email_deliveries.recipient
       returning status, recipient, provider_message_id, event_state, outcome_unknown_since is not null as unknown,
         (extract(epoch from now() - request_left_at) * 1000)::int as left_age_ms, xmax = 0 as inserted`,
    ),
    values: [key, email.to, links.payrollRunId ?? null, links.companyId ?? null, links.employeeId ?? null],
  });
  const delivery = rows[0]!;
  if (delivery.status === 'sent') return { sent: true, messageId: delivery.provider_message_id ?? '', alreadySent: true };
  if (delivery.event_state !== null) return markAccepted(pool, key, null, true);

  let resend = false;
  if (!delivery.inserted && delivery.unknown) {
    // An earlier attempt's request may have left and no answer came. Its left time is recorded
    // when its process lived to see the outcome; if not (a crash), it left no later than now.
    let leftAgeMs = delivery.left_age_ms;
    if (leftAgeMs === null) {
      await pool.query(`update email_deliveries set request_left_at = now() where idempotency_key = $1 and request_left_at is null`, [key]);
      leftAgeMs = 0;
    }
    // The lookup may wait for its turn, but leaves the attempt time to defer, or — its window
    // over — to send (the drill: a lookup that ate the attempt's time left none for the request).
    const windowOver = leftAgeMs >= windowMs;
    const timeLeft = options.timeLeftMs?.() ?? Infinity;
    const lookupWaitMs = Math.min(options.evidenceWaitMs ?? 10_000, timeLeft - 2000 - (windowOver ? mailer.requestTimeoutMs : 0));
    // Looked up for the address that request went to, not this attempt's: HR may have fixed it
    // since, and the Activity API lists messages by recipient (a lookup for the new address
    // missed the message and the policy sent the slip again once the window passed).
    const accepted = await findEvidence(deps, { ...email, to: delivery.recipient }, options.signal, lookupWaitMs);
    if (accepted !== null) return markAccepted(pool, key, accepted, true);
    if (!windowOver) {
      throw new DeferError(
        'outcome_unknown',
        `the provider may have accepted ${key} ${Math.round(leftAgeMs / 1000)} s ago; waiting for its evidence (settle window ${Math.round(windowMs / 1000)} s)`,
        {
          retryAfterMs: Math.min(windowMs - leftAgeMs, recheckMs),
        },
      );
    }
    resend = true; // the policy: no evidence within the window
  }

  // Record the attempt before the call: from here its outcome is unknown until it answers (a new
  // key's insert recorded it already).
  if (!delivery.inserted)
    await pool.query(
      `update email_deliveries set status = 'sending', attempts = attempts + 1, recipient = $2, outcome_unknown_since = null, request_left_at = null,
            resent_after_unknown = resent_after_unknown + case when $3 then 1 else 0 end
     where idempotency_key = $1`,
      [key, email.to, resend],
    );
  let leftAt: number | undefined;
  let release: (() => void) | undefined;
  // The request leaves only if its whole timeout fits in the attempt's time left.
  const timeToSend = () => {
    if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
    const timeLeft = options.timeLeftMs?.() ?? Infinity;
    if (timeLeft < mailer.requestTimeoutMs + 1000) {
      throw new TransientError(
        'no_time_to_send',
        `only ${Math.round(timeLeft)} ms left in this attempt: a request needs up to ${mailer.requestTimeoutMs} ms; not sent`,
      );
    }
  };
  const beforeRequest = async () => {
    await options.beforeSend?.();
    timeToSend();
    // From here the request may leave: its outcome is unknown until it answers. Recorded now, not
    // when the attempt began: an attempt killed while it waited for its slot or its place under
    // the rate limit never sent, and its next attempt sends at once instead of waiting out a
    // settle window (the drill's resends held by a SIGKILLed worker arrived after 87–143 s).
    for (let turns = 1; ; turns++) {
      // A synchronous commit (never ASYNC_COMMIT): durable before the request may leave, and with
      // it every asynchronous commit before it (the claim, the delivery row, the slot, the place).
      // The row must be there: one lost with a server crash under this attempt would leave the
      // request no record at all for the next attempt to wait on.
      const marked = await pool.query({ ...prepared(`update email_deliveries set outcome_unknown_since = now() where idempotency_key = $1`), values: [key] });
      if (marked.rowCount !== 1) {
        throw new TransientError(
          'delivery_record_missing',
          `the delivery record of ${key} is gone (the database crashed or was restored under this attempt); not sent`,
        );
      }
      await options.announced?.();
      // The mark and the check may have made the turn late (a database slow after a fault): a send
      // placed late in its second would arrive in the next one, one more than the provider allows
      // (the drill's one 429 outside its 429 window). A new turn is waited for without the mark —
      // an attempt killed while it waits never sent — then the mark and the check again; after
      // three turns the request goes late.
      if (turns >= 3 || (options.turnOnTime?.() ?? true)) break;
      await pool.query({ ...prepared(`update email_deliveries set outcome_unknown_since = null where idempotency_key = $1`), values: [key] });
      await options.beforeSend?.();
      timeToSend();
    }
    release = options.hold?.();
    leftAt = performance.now();
  };
  const leftSql = `now() - make_interval(secs => $3::float8 / 1000)`;
  try {
    const messageId = await mailer.send(email, { beforeRequest });
    release?.();
    await pool.query({
      ...prepared(
        `update email_deliveries set status = 'sent', provider_message_id = $2, sent_at = now(), last_error = null, outcome_unknown_since = null,
                request_left_at = ${leftSql} from ${ASYNC_COMMIT} where idempotency_key = $1`,
      ),
      values: [key, messageId, performance.now() - (leftAt ?? performance.now())],
    });
    return { sent: true, messageId, alreadySent: false, ...(resend ? { resentAfterUnknown: true } : {}) };
  } catch (error) {
    release?.();
    const definite = certainlyNotAccepted(error) || leftAt === undefined; // answered, or never left
    const record = () =>
      pool.query(
        `update email_deliveries set status = case when $4 and $5 then 'failed'::"DeliveryStatus" else status end, last_error = $2,
              outcome_unknown_since = case when $4 then null else outcome_unknown_since end,
              request_left_at = case when $6 then ${leftSql} else null end
       where idempotency_key = $1`,
        [
          key,
          (error as Error).message,
          performance.now() - (leftAt ?? performance.now()),
          definite,
          (error as { kind?: string }).kind === 'permanent',
          leftAt !== undefined,
        ],
      );
    // A request that never left must not stay an unknown outcome: the next attempt would wait out
    // the settle window for evidence that cannot come. The mark is made before the one-slip check
    // (`announced`), so a database fault during that check is the usual way here: the record is
    // tried again until the database answers, within the attempt's time (an idempotent update).
    if (definite) {
      const deadlineMs = Math.max(0, Math.min(30_000, (options.timeLeftMs?.() ?? 30_000) - 1000));
      await retryOnConnectionError(record, { deadlineMs });
      throw error;
    }
    await record();
    // The request left and no answer came back. Wait in this attempt for the evidence (the
    // webhook's first event usually comes within seconds), then defer the job.
    const waitMs = Math.min(options.evidenceWaitMs ?? 10_000, (options.timeLeftMs?.() ?? 15_000) - 2000);
    const accepted = await awaitEvidence(deps, email, waitMs, options.signal, options.timeLeftMs);
    if (accepted !== null) return markAccepted(pool, key, accepted, false);
    const sinceLeft = performance.now() - leftAt!;
    throw new DeferError(
      'outcome_unknown',
      `no answer from the provider for ${key} (${(error as Error).message}); waiting for the evidence of its acceptance`,
      {
        cause: error,
        retryAfterMs: Math.max(0, Math.min(windowMs - sinceLeft, recheckMs)),
      },
    );
  }
}

async function markAccepted(pool: Pool, key: string, messageId: string | null, alreadySent: boolean): Promise<DeliveryResult> {
  const { rows } = await pool.query<{ provider_message_id: string | null }>(
    `update email_deliveries set status = 'sent', provider_message_id = coalesce(provider_message_id, $2), sent_at = coalesce(sent_at, now()),
            outcome_unknown_since = null where idempotency_key = $1 returning provider_message_id`,
    [key, messageId],
  );
  return { sent: true, messageId: rows[0]?.provider_message_id ?? '', alreadySent };
}

/**
 * Evidence that the provider accepted the key: a webhook event applied to its row, or the
 * Activity API — whose turn (5 a minute for the whole account) is waited for at most
 * `lookupWaitMs`: no turn in time is "still unknown", and the attempt goes on to defer (or, its
 * window over, to resend) instead of spending its whole timeout in the queue of lookups.
 */
async function findEvidence(deps: DeliveryDeps, email: OutgoingEmail, signal: AbortSignal | undefined, lookupWaitMs: number): Promise<string | null> {
  const { rows } = await deps.pool.query<{ status: string; event_state: string | null; provider_message_id: string | null }>(
    `select status, event_state, provider_message_id from email_deliveries where idempotency_key = $1`,
    [email.idempotencyKey],
  );
  const row = rows[0];
  if (row && (row.status === 'sent' || row.event_state !== null)) return row.provider_message_id ?? '';
  if (!deps.activity) return null;
  // Whole milliseconds: AbortSignal.timeout throws a RangeError for 7986.5 (the attempt's time left
  // is fractional) — every attempt after a settle window failed "unexpected" (the drill, December 4).
  const bounded = AbortSignal.any([...(signal ? [signal] : []), AbortSignal.timeout(Math.max(0, Math.floor(lookupWaitMs)))]);
  const found = await deps.activity.find({ key: email.idempotencyKey, to: email.to }, bounded);
  return typeof found === 'string' && found !== 'unknown' ? found : null;
}

async function awaitEvidence(
  deps: DeliveryDeps,
  email: OutgoingEmail,
  waitMs: number,
  signal: AbortSignal | undefined,
  timeLeftMs: (() => number) | undefined,
): Promise<string | null> {
  const until = performance.now() + waitMs;
  try {
    while (performance.now() < until) {
      await sleep(Math.min(500, Math.max(0, until - performance.now())), undefined, signal ? { signal } : {});
      const { rows } = await deps.pool.query<{ status: string; event_state: string | null; provider_message_id: string | null }>(
        `select status, event_state, provider_message_id from email_deliveries where idempotency_key = $1`,
        [email.idempotencyKey],
      );
      const row = rows[0];
      if (row && (row.status === 'sent' || row.event_state !== null)) return row.provider_message_id ?? '';
    }
    // The lookup's turn: what the attempt has left (a second before its timeout), at most waitMs.
    return await findEvidence(deps, email, signal, Math.min(waitMs, (timeLeftMs?.() ?? waitMs) - 1000));
  } catch {
    return null; // no time left (the job's signal): the next run looks again
  }
}

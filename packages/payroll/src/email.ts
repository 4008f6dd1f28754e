import { ASYNC_COMMIT, prepared, type Pool, type PoolClient } from '@beton/db';
import { retryOnConnectionError, TransientError } from '@beton/jobs/client';
import { certainlyNotAccepted, type Mailer, type OutgoingEmail } from './mailer.ts';
import type { ScheduledSlot } from './scheduling.ts';

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
   * A bulk send's batch (scheduling.ts: the current window's SendGrid batch and send_at). Absent:
   * the email is sent at once (HR's resends, reminders, status emails), and an unknown outcome of
   * it can only be settled by evidence or by a person.
   */
  batch?: () => Promise<ScheduledSlot>;
}

export interface DeliveryDeps {
  pool: Pool;
  mailer: Mailer;
}

/** What the email is about, for HR's counts and lists. */
export interface EmailLinks {
  payrollRunId?: string | undefined;
  companyId?: string | undefined;
  employeeId?: number | undefined;
}

export type DeliveryResult =
  | {
      sent: true;
      messageId: string;
      alreadySent: boolean;
      /** A bulk send's batch and send_at: the provider sends it then. */
      scheduled?: ScheduledSlot;
    }
  | {
      sent: false;
      /**
       * The request left and no answer came (or an earlier attempt's did not): recorded in
       * email_unknown_outcomes, settled by the settle job (evidence, or its batch cancelled and the
       * email sent again), never sent again by this job. The job ends: no slot is held waiting.
       */
      unknown: true;
    };

interface DeliveryRow {
  status: string;
  /** The address of the row's last attempt: the one an unknown outcome's request went to. */
  recipient: string;
  provider_message_id: string | null;
  event_state: string | null;
  unknown: boolean;
  batch_id: string | null;
}

/**
 * Exactly-once email (R7; docs/exactly-once.md). The delivery row of the key is consulted first:
 * sent, or any Event Webhook event for the key (the provider has it) → done without sending. A
 * send records its attempt, marks the outcome unknown right before the request may leave (after
 * its turn under the rate limit; with its batch, for a bulk send) and, once the request is
 * answered, records the outcome. A request that left with no answer (a cut connection, a
 * timeout), or an earlier attempt's mark found with no answer (a killed worker), is an **unknown
 * outcome**: recorded in `email_unknown_outcomes` and the job ends — it holds no slot waiting, and
 * it never sends the email again on a timer. The settle job (settle.ts) settles it: by evidence
 * (the webhook's events, the Activity API), or, for a bulk send, by cancelling its batch — proof
 * that SendGrid discards the first send — and sending the batch's emails again. A send with no
 * batch that evidence does not settle stays **unconfirmed** until a person decides.
 */
export async function deliverEmail(deps: DeliveryDeps, email: OutgoingEmail & { links?: EmailLinks }, options: DeliverOptions = {}): Promise<DeliveryResult> {
  const { pool, mailer } = deps;
  const key = email.idempotencyKey;
  const links = email.links ?? {};
  // A new key's row is inserted with its first attempt already recorded (what the "record the
  // attempt" update below does for an existing row): one statement for the common case. An
  // existing row is returned as it stands (xmax = 0 only on the row this statement inserted).
  // Committed asynchronously (@beton/db ASYNC_COMMIT), as is the "sent" below: the unknown mark
  // before the request is a synchronous commit, which makes this one durable before anything is
  // sent; lost in a server crash, the row is made again by the job's next attempt.
  const { rows } = await pool.query<DeliveryRow & { inserted: boolean }>({
    ...prepared(
      `insert into email_deliveries (idempotency_key, recipient, status, attempts, outcome_unknown_since, payroll_run_id, company_id, employee_id)
       select $1, $2, 'sending', 1, null, $3, $4, $5 from ${ASYNC_COMMIT}
       on conflict (idempotency_key) do update set recipient = email_deliveries.recipient
       returning status, recipient, provider_message_id, event_state, outcome_unknown_since is not null as unknown, batch_id, xmax = 0 as inserted`,
    ),
    values: [key, email.to, links.payrollRunId ?? null, links.companyId ?? null, links.employeeId ?? null],
  });
  const delivery = rows[0]!;
  if (delivery.status === 'sent') return { sent: true, messageId: delivery.provider_message_id ?? '', alreadySent: true };
  if (delivery.event_state !== null) return markAccepted(pool, key, null, true);
  if (!delivery.inserted && delivery.unknown) {
    // An earlier attempt's request may have left and no answer came (its worker was killed, or its
    // record of the outcome was lost): the outcome is unknown. Recorded for the settle job; never
    // sent again from here.
    await recordUnknown(pool, { key, recipient: delivery.recipient, batchId: delivery.batch_id });
    return { sent: false, unknown: true };
  }

  // Record the attempt before the call: from here its outcome is unknown until it answers (a new
  // key's insert recorded it already).
  if (!delivery.inserted)
    await pool.query(
      `update email_deliveries set status = 'sending', attempts = attempts + 1, recipient = $2, outcome_unknown_since = null, request_left_at = null
     where idempotency_key = $1`,
      [key, email.to],
    );
  // A bulk send joins its window's batch (taken before the turn: the batch stays cancellable for
  // the lead, far longer than the attempt can take to leave).
  const slot = options.batch ? await options.batch() : undefined;
  const outgoing: OutgoingEmail = slot ? { ...email, schedule: slot } : email;
  let leftAt: number | undefined;
  let release: (() => void) | undefined;
  let markedByUs = false; // the row's unknown mark is this attempt's (not another's in flight)
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
    // the rate limit never sent, and its next attempt sends at once.
    for (let turns = 1; ; turns++) {
      // A synchronous commit (never ASYNC_COMMIT): durable before the request may leave, and with
      // it every asynchronous commit before it (the claim, the delivery row, the slot, the place).
      // The row must be there: one lost with a server crash under this attempt would leave the
      // request no record at all. The batch is recorded with the mark: a cancelled batch's
      // deliveries are the ones sent again.
      // Only one attempt of a key is marked at a time (a killed worker's job recovered while the
      // batch's resend runs: the second waits and then finds the first's outcome), and a bulk
      // send's batch must still be open (not decided by the settle job while this attempt waited:
      // its row is share-locked until the mark commits).
      const marked = await pool.query({
        ...prepared(
          `update email_deliveries set outcome_unknown_since = now(), batch_id = $2, send_at = $3
           where idempotency_key = $1 and outcome_unknown_since is null
             and ($2::text is null or exists (select 1 from email_batches where batch_id = $2 and state = 'open' for share))`,
        ),
        values: [key, slot?.batchId ?? null, slot?.sendAt ?? null],
      });
      if (marked.rowCount !== 1) throw await notMarked(pool, key, slot);
      markedByUs = true;
      await options.announced?.();
      // The mark and the check may have made the turn late (a database slow after a fault): a send
      // placed late in its second would arrive in the next one, one more than the provider allows.
      // A new turn is waited for without the mark — an attempt killed while it waits never sent —
      // then the mark and the check again; after three turns the request goes late.
      if (turns >= 3 || (options.turnOnTime?.() ?? true)) break;
      await pool.query({ ...prepared(`update email_deliveries set outcome_unknown_since = null where idempotency_key = $1`), values: [key] });
      markedByUs = false;
      await options.beforeSend?.();
      timeToSend();
    }
    release = options.hold?.();
    leftAt = performance.now();
  };
  const leftSql = `now() - make_interval(secs => $3::float8 / 1000)`;
  try {
    const messageId = await mailer.send(outgoing, { beforeRequest });
    release?.();
    await pool.query({
      ...prepared(
        `update email_deliveries set status = 'sent', provider_message_id = $2, sent_at = now(), last_error = null, outcome_unknown_since = null,
                request_left_at = ${leftSql} from ${ASYNC_COMMIT} where idempotency_key = $1 and batch_id is not distinct from $4`,
      ),
      values: [key, messageId, performance.now() - (leftAt ?? performance.now()), slot?.batchId ?? null],
    });
    // (No row updated: its batch was cancelled while the request was on the wire — SendGrid
    // discards this message, and the batch's resend sends the email again.)
    return { sent: true, messageId, alreadySent: false, ...(slot ? { scheduled: slot } : {}) };
  } catch (error) {
    release?.();
    const definite = certainlyNotAccepted(error) || leftAt === undefined; // answered, or never left
    if (!markedByUs) throw error; // never marked (or the mark was cleared): the row is not this attempt's to change
    const record = () =>
      pool.query(
        `update email_deliveries set status = case when $4 and $5 then 'failed'::"DeliveryStatus" else status end, last_error = $2,
              outcome_unknown_since = case when $4 then null else outcome_unknown_since end,
              request_left_at = case when $6 then ${leftSql} else null end
       where idempotency_key = $1 and batch_id is not distinct from $7`,
        [
          key,
          (error as Error).message,
          performance.now() - (leftAt ?? performance.now()),
          definite,
          (error as { kind?: string }).kind === 'permanent',
          leftAt !== undefined,
          slot?.batchId ?? null,
        ],
      );
    // A request that never left must not stay an unknown outcome. The mark is made before the
    // one-slip check (`announced`), so a database fault during that check is the usual way here:
    // the record is tried again until the database answers, within the attempt's time.
    if (definite) {
      const deadlineMs = Math.max(0, Math.min(30_000, (options.timeLeftMs?.() ?? 30_000) - 1000));
      await retryOnConnectionError(record, { deadlineMs });
      throw error;
    }
    // The request left and no answer came back: an unknown outcome, for the settle job. The job
    // ends here (its slot freed at once), whatever the outcome turns out to be.
    const recorded = await record();
    // Its batch cancelled meanwhile (the row reset for the resend): nothing to record.
    if (recorded.rowCount === 0) return { sent: false, unknown: true };
    await recordUnknown(pool, { key, recipient: email.to, batchId: slot?.batchId ?? null, evidence: `no answer: ${(error as Error).message}` });
    return { sent: false, unknown: true };
  }
}

/** Why an attempt could not mark its send (nothing was sent): a transient error, the next attempt sees. */
async function notMarked(pool: Pool, key: string, slot: ScheduledSlot | undefined): Promise<Error> {
  const { rows } = await pool.query<{ busy: boolean }>(`select outcome_unknown_since is not null as busy from email_deliveries where idempotency_key = $1`, [
    key,
  ]);
  if (rows.length === 0)
    return new TransientError(
      'delivery_record_missing',
      `the delivery record of ${key} is gone (the database crashed or was restored under this attempt); not sent`,
    );
  if (rows[0]!.busy) return new TransientError('send_in_flight', `another attempt of ${key} is sending it (or its outcome is unknown); not sent`);
  return new TransientError(
    'batch_closed',
    `the batch ${slot?.batchId} of ${key} was decided while this attempt waited; not sent (the next attempt joins the current batch)`,
  );
}

/**
 * Records an unknown outcome (one row per key: a key sent again after its batch was cancelled may
 * become unknown again, and its settled row is then reopened for the new send).
 */
export async function recordUnknown(db: Pool | PoolClient, u: { key: string; recipient: string; batchId: string | null; evidence?: string }): Promise<void> {
  // Only while the delivery still says so (its batch may have been cancelled and the row reset
  // for the resend meanwhile: then there is nothing unknown to record).
  await db.query(
    `insert into email_unknown_outcomes (idempotency_key, recipient, batch_id, evidence)
     select $1, $2, $3, $4 from email_deliveries d
     where d.idempotency_key = $1 and d.outcome_unknown_since is not null and d.batch_id is not distinct from $3
     on conflict (idempotency_key) do update set recipient = excluded.recipient, batch_id = excluded.batch_id, recorded_at = now(),
       lookups = 0, last_looked_up_at = null, lookup_error = null, settled_at = null, settled_by = null, evidence = excluded.evidence
     where email_unknown_outcomes.settled_at is not null`,
    [u.key, u.recipient, u.batchId, u.evidence ?? null],
  );
}

async function markAccepted(pool: Pool, key: string, messageId: string | null, alreadySent: boolean): Promise<DeliveryResult> {
  const { rows } = await pool.query<{ provider_message_id: string | null }>(
    `update email_deliveries set status = 'sent', provider_message_id = coalesce(provider_message_id, $2), sent_at = coalesce(sent_at, now()),
            outcome_unknown_since = null where idempotency_key = $1 returning provider_message_id`,
    [key, messageId],
  );
  return { sent: true, messageId: rows[0]?.provider_message_id ?? '', alreadySent };
}

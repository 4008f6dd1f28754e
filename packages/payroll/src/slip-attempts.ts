/**
 * The attempts at one employee's slip of one month (R13), as the database knows them: which
 * keys they have, which one the provider accepted, which one is still in flight, and closing
 * the others once one is accepted. Free of the mailer and the renderer, so the web server
 * (HR's resend) and the read models use it too; the send itself is in one-slip.ts.
 */
import { inTransaction, type Pool, type PoolClient } from '@beton/db';
import { supersedeJobs } from '@beton/jobs/client';
import { renderSlipJob, sendSlipEmailJob } from './jobs/index.ts';
import { slipKeySql } from './jobs/slip-payload.ts';

/** The slip tasks: a slip's attempt is a render job and the email job it enqueues. */
export const SLIP_TASKS = [renderSlipJob.name, sendSlipEmailJob.name] as const;
/** The task names as an SQL list, for statements that filter on them: `('render-slip', 'send-slip-email')`. */
export const SLIP_TASKS_SQL = `(${SLIP_TASKS.map((t) => `'${t}'`).join(', ')})`;

/**
 * SQL: the delivery keys of the attempts at employee `employee`'s slip of month `month` (SQL
 * expressions): the monthly run's key and each resend's recorded in slip_resends — not the
 * extra copies.
 */
export function slipKeysSql(employee: string, month: string): string {
  return `(array[${slipKeySql(month, employee)}]
    || array(select ${slipKeySql('r.month', 'r.employee_id', 'r.n')}
             from slip_resends r where r.employee_id = ${employee} and r.month = ${month} and not r.copy))`;
}

/**
 * SQL: the key under which THE PROVIDER ACCEPTED AN EMAIL for this employee's slip of this
 * month (the first, by time), or null; with `exceptKey`, among the other attempts only. This
 * is the one definition the one-slip rule keys off (superseding, HR's resend, the resend
 * check before a send). "Accepted" is an `email_deliveries` row with status 'sent' (the
 * provider answered 202, or its events or activity feed showed the message) that the
 * provider's Event Webhook has not since reported bounced or dropped: a slip that never
 * reached the inbox is not the month's slip, so HR's resend after fixing the address sends
 * one (to the new address).
 */
export function slipAcceptedKeySql(employee: string, month: string, exceptKey?: string): string {
  return `(select d.idempotency_key from email_deliveries d
    where d.status = 'sent' and d.event_state is distinct from 'bounced' and d.event_state is distinct from 'dropped'
      and d.idempotency_key = any(${slipKeysSql(employee, month)})${exceptKey ? ` and d.idempotency_key <> ${exceptKey}` : ''}
    order by d.sent_at nulls last, d.idempotency_key limit 1)`;
}

/**
 * SQL: the key of another attempt at the slip whose send may have been accepted but is not
 * known yet (its request is out, or its answer was lost), or null.
 */
export function slipInFlightKeySql(employee: string, month: string, exceptKey: string): string {
  return `(select d.idempotency_key from email_deliveries d
    where d.status = 'sending' and d.outcome_unknown_since is not null
      and d.idempotency_key = any(${slipKeysSql(employee, month)}) and d.idempotency_key <> ${exceptKey}
    order by d.idempotency_key limit 1)`;
}

export interface SlipDelivery {
  /** The delivery key that was accepted. */
  key: string;
  sentAt: Date | null;
  /** The address it went to. */
  to: string;
}

/** The month's slip as accepted by the provider (see slipAcceptedKeySql), or null. */
export async function slipDelivery(db: Pool | PoolClient, employeeId: number, month: string): Promise<SlipDelivery | null> {
  const { rows } = await db.query<{ key: string; sent_at: Date | null; recipient: string }>(
    `select d.idempotency_key as key, d.sent_at, d.recipient from email_deliveries d where d.idempotency_key = ${slipAcceptedKeySql('$1::int', '$2::text')}`,
    [employeeId, month],
  );
  const r = rows[0];
  return r ? { key: r.key, sentAt: r.sent_at, to: r.recipient } : null;
}

/** Which attempt at a slip a key is: the monthly run's, HR's resend #n or extra copy #n. Pages write it in their language. */
export interface SlipAttempt {
  kind: 'run' | 'resend' | 'copy';
  /** The resend's or copy's number; null for the monthly run. */
  n: number | null;
}

/** The attempt a slip's key (render or email, `slip:<month>:emp-<id>[:resend-n|:copy-n][:email]`) belongs to. */
export function attemptOf(key: string): SlipAttempt {
  const m = /:(resend|copy)-(\d+)(?::email)?$/.exec(key);
  return m ? { kind: m[1] as 'resend' | 'copy', n: Number(m[2]) } : { kind: 'run', n: null };
}

/** "resend #2" / "the monthly run": an attempt in the logs' and the CLI's English (pages use attemptOf). */
export function attemptLabel(key: string): string {
  const a = attemptOf(key);
  return a.kind === 'run' ? 'the monthly run' : `${a.kind} #${a.n}`;
}

/**
 * Why a slip's job was closed as superseded (its error code; pages write the words): another
 * attempt at the slip was delivered, or HR's resend replaced this failed attempt.
 */
export const SUPERSEDED_CODES = { delivered: 'superseded', replacedByResend: 'superseded_by_resend' } as const;

/**
 * A slip was accepted under `deliveredKey`: the other attempts' queued, retrying and failed
 * jobs are closed as superseded by it (their running jobs find out before they send).
 */
export async function supersedeOtherAttempts(pool: Pool, input: { employeeId: number; month: string; deliveredKey: string }): Promise<number[]> {
  return inTransaction(pool, undefined, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `select id::text from jobs
       where employee_id = $1 and payload->>'month' = $2 and task_name = any($3::text[]) and status in ('queued', 'retrying', 'failed')
         and not payload ? 'copy' and idempotency_key <> all(array[$4, $4 || ':email'])
       order by id for update`,
      [input.employeeId, input.month, SLIP_TASKS, input.deliveredKey],
    );
    return supersedeJobs(
      client,
      rows.map((r) => Number(r.id)),
      input.deliveredKey,
      `superseded: the slip was delivered by ${attemptLabel(input.deliveredKey)}`,
      SUPERSEDED_CODES.delivered,
    );
  });
}

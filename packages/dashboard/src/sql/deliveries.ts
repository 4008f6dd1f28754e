/**
 * The reads of email deliveries and their webhook events behind HR's delivery counts and
 * addresses to fix, an employee's events, and the admin's email panel (the service:
 * ../delivery.ts). A delivery's status machine is packages/payroll/src/delivery-status.ts.
 */
import type { PoolClient } from '@beton/db';

/** A pool or a transaction's client. */
type Db = Pick<PoolClient, 'query'>;

/** True when the payroll run is the company's. */
export async function runOfCompany(db: Db, companyId: string, runId: string): Promise<boolean> {
  return ((await db.query(`select 1 from payroll_runs where id = $1 and company_id = $2`, [runId, companyId])).rowCount ?? 0) > 0;
}

/** True when the employee is the company's. */
export async function employeeOfCompany(db: Db, companyId: string, employeeId: number): Promise<boolean> {
  return ((await db.query(`select 1 from employees where id = $1 and company_id = $2`, [employeeId, companyId])).rowCount ?? 0) > 0;
}

export interface DeliveryCountsRow {
  delivered: number;
  bounced: number;
  dropped: number;
  spamReports: number;
  awaiting: number;
  unconfirmed: number;
  resentOnProof: number;
  resentByPerson: number;
}

/** An unknown outcome no cancellable batch can settle any more (none, sealed or uncancellable) and no evidence did: unconfirmed. */
const UNCONFIRMED = `u.settled_at is null and b.state is distinct from 'open'`;

/**
 * A run's deliveries by their last event; `awaiting`: accepted (or outcome unknown) with no event
 * among `finalStates` yet; unconfirmed ones, and the resends on proof and by a person.
 */
export async function runDeliveryCountsRow(db: Db, runId: string, finalStates: readonly string[]): Promise<DeliveryCountsRow> {
  const { rows } = await db.query<DeliveryCountsRow>(
    `select count(*) filter (where event_state = 'delivered')::int as delivered, count(*) filter (where event_state = 'bounced')::int as bounced,
            count(*) filter (where event_state = 'dropped')::int as dropped, count(*) filter (where event_state = 'spam_report')::int as "spamReports",
            count(*) filter (where (status = 'sent' or outcome_unknown_since is not null) and (event_state is null or not (event_state = any($2::text[]))))::int as awaiting,
            count(*) filter (where exists (select 1 from email_unknown_outcomes u left join email_batches b on b.batch_id = u.batch_id
                                           where u.idempotency_key = d.idempotency_key and ${UNCONFIRMED}))::int as unconfirmed,
            coalesce(sum(resent_on_proof), 0)::int as "resentOnProof", coalesce(sum(resent_by_person), 0)::int as "resentByPerson"
     from email_deliveries d where payroll_run_id = $1`,
    [runId, finalStates],
  );
  return rows[0]!;
}

export interface AddressToFixRow {
  employeeId: number;
  name: string;
  email: string;
  state: string;
  reason: string | null;
  at: Date | null;
}

/** The company's employees whose latest email bounced or was dropped, to the address they still have (at most 200). */
export async function addressToFixRows(db: Db, companyId: string): Promise<AddressToFixRow[]> {
  const { rows } = await db.query<AddressToFixRow>(
    `select distinct on (e.id) e.id as "employeeId", e.name_latin as name, e.email, d.event_state as state, d.event_reason as reason, d.event_at as at
     from email_deliveries d join employees e on e.id = d.employee_id
     where d.company_id = $1 and d.event_state in ('bounced', 'dropped') and lower(d.recipient) = lower(e.email)
     order by e.id, d.event_at desc nulls last limit 200`,
    [companyId],
  );
  return rows;
}

export interface DeliveryEventRow {
  key: string;
  event: string;
  email: string;
  reason: string | null;
  at: Date;
}

/** Every stored webhook event of the employee's emails, oldest first (at most 500). */
export async function employeeEventRows(db: Db, employeeId: number): Promise<DeliveryEventRow[]> {
  const { rows } = await db.query<DeliveryEventRow>(
    `select ev.idempotency_key as key, ev.event, ev.email, ev.reason, ev.occurred_at as at
     from email_deliveries d join email_events ev on ev.idempotency_key = d.idempotency_key
     where d.employee_id = $1 order by ev.occurred_at, ev.received_at limit 500`,
    [employeeId],
  );
  return rows;
}

export interface UnconfirmedEmailRow {
  key: string;
  recipient: string;
  employeeId: number | null;
  companyId: string | null;
  recordedAt: Date;
  lookups: number;
  lastLookedUpAt: Date | null;
  lookupError: string | null;
  evidence: string | null;
  batch: string;
}

/** Unconfirmed emails with the evidence gathered, oldest first (at most 200); of one company when given. */
export async function unconfirmedEmailRows(db: Db, companyId?: string): Promise<UnconfirmedEmailRow[]> {
  const { rows } = await db.query<UnconfirmedEmailRow>(
    `select u.idempotency_key as key, u.recipient, d.employee_id as "employeeId", d.company_id as "companyId", u.recorded_at as "recordedAt",
            u.lookups, u.last_looked_up_at as "lastLookedUpAt", u.lookup_error as "lookupError", u.evidence, coalesce(b.state, 'none') as batch
     from email_unknown_outcomes u join email_deliveries d on d.idempotency_key = u.idempotency_key left join email_batches b on b.batch_id = u.batch_id
     where ${UNCONFIRMED} and ($1::uuid is null or d.company_id = $1::uuid)
     order by u.recorded_at limit 200`,
    [companyId ?? null],
  );
  return rows;
}

/** Each payroll run with unconfirmed slip emails: its company, month, zone, deadline and how many. */
export async function unconfirmedRunRows(db: Db): Promise<Array<{ company: string; month: string; time_zone: string; deadline: string; n: number }>> {
  const { rows } = await db.query<{ company: string; month: string; time_zone: string; deadline: string; n: number }>(
    `select c.id as company, r.month, c.time_zone, c.deadline, count(*)::int as n
     from email_unknown_outcomes u join email_deliveries d on d.idempotency_key = u.idempotency_key
       join payroll_runs r on r.id = d.payroll_run_id join companies c on c.id = r.company_id
       left join email_batches b on b.batch_id = u.batch_id
     where ${UNCONFIRMED}
     group by 1, 2, 3, 4`,
  );
  return rows;
}

/** The unknown outcomes being looked up: how many, the oldest, the last lookup, how many never looked up. */
export async function unknownOutcomeCoverage(db: Db): Promise<{ open: number; oldest: Date | null; lastLookedUpAt: Date | null; neverLookedUp: number }> {
  const { rows } = await db.query<{ open: number; oldest: Date | null; lastLookedUpAt: Date | null; neverLookedUp: number }>(
    `select count(*)::int as open, min(recorded_at) as oldest, max(last_looked_up_at) as "lastLookedUpAt",
            count(*) filter (where last_looked_up_at is null)::int as "neverLookedUp"
     from email_unknown_outcomes where settled_at is null`,
  );
  return rows[0]!;
}

/** Emails sent again on proof (their batch cancelled) and by a person (while unconfirmed). */
export async function resendSums(db: Db): Promise<{ proof: number; person: number }> {
  const { rows } = await db.query<{ proof: number; person: number }>(
    `select coalesce(sum(resent_on_proof), 0)::int as proof, coalesce(sum(resent_by_person), 0)::int as person from email_deliveries
     where resent_on_proof > 0 or resent_by_person > 0`,
  );
  return rows[0]!;
}

/** The bulk's SendGrid batches by state (open, sealed, cancelled, uncancellable). */
export async function batchesByState(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ state: string; n: number }>(`select state, count(*)::int as n from email_batches group by state`);
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

export interface WebhookHealthRow {
  lastReceivedAt: Date | null;
  lastEventAt: Date | null;
  lastLagMs: number | null;
  maxLagMs: number;
  failures: number;
  lastFailureAt: Date | null;
  lastFailure: string | null;
}

/** The Event Webhook's health as the receiver saw it; undefined before its first batch. */
export async function webhookHealthRow(db: Db): Promise<WebhookHealthRow | undefined> {
  const { rows } = await db.query<WebhookHealthRow>(
    `select last_received_at as "lastReceivedAt", last_event_at as "lastEventAt", last_lag_ms as "lastLagMs", max_lag_ms as "maxLagMs",
            failures, last_failure_at as "lastFailureAt", last_failure as "lastFailure" from email_webhook_health where id = 1`,
  );
  return rows[0];
}

/** Seconds since the oldest email accepted in the last 24 hours that no webhook event has confirmed (0 when none). */
export async function oldestUnconfirmedByWebhookSeconds(db: Db): Promise<number> {
  const { rows } = await db.query<{ seconds: number }>(
    `select coalesce(extract(epoch from now() - min(sent_at)), 0)::float8 as seconds from email_deliveries
     where created_at > now() - interval '1 day' and status = 'sent' and event_state is null and sent_at is not null`,
  );
  return rows[0]!.seconds;
}

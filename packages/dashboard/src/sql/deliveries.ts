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
}

/** A run's deliveries by their last event; `awaiting`: accepted (or outcome unknown) with no event among `finalStates` yet. */
export async function runDeliveryCountsRow(db: Db, runId: string, finalStates: readonly string[]): Promise<DeliveryCountsRow> {
  const { rows } = await db.query<DeliveryCountsRow>(
    `select count(*) filter (where event_state = 'delivered')::int as delivered, count(*) filter (where event_state = 'bounced')::int as bounced,
            count(*) filter (where event_state = 'dropped')::int as dropped, count(*) filter (where event_state = 'spam_report')::int as "spamReports",
            count(*) filter (where (status = 'sent' or outcome_unknown_since is not null) and (event_state is null or not (event_state = any($2::text[]))))::int as awaiting
     from email_deliveries where payroll_run_id = $1`,
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

/** Sends made after an unknown outcome (each a possible duplicate), and deliveries whose outcome is unknown now. */
export async function unknownOutcomeSums(db: Db): Promise<{ resent: number; unknown: number }> {
  const { rows } = await db.query<{ resent: number; unknown: number }>(
    `select coalesce(sum(resent_after_unknown), 0)::int as resent, count(*) filter (where outcome_unknown_since is not null)::int as unknown from email_deliveries`,
  );
  return rows[0]!;
}

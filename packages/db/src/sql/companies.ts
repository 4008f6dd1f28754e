/**
 * Every statement on the `companies` table by itself, with its typed row: the one way a company
 * is read (the session's company name, the admin's lists, the CLI's lookups, the settings page)
 * and written (created, its slip protection changed). The rules around them (validation, audit,
 * the view a page shows) are the services': `@beton/dashboard` companies.ts, `users.ts`.
 * Statements that join companies into another table's read (a run, an employee, a slip) stay
 * with that read.
 */
import type { PoolClient } from '../pool.ts';

/** A pool or a transaction's client: every statement here runs on either. */
type Db = Pick<PoolClient, 'query'>;

export interface CompanyName {
  id: string;
  name: string;
}

/** The name of company `id`, or null when there is none. */
export async function companyName(db: Db, id: string): Promise<string | null> {
  const { rows } = await db.query<{ name: string }>(`select name from companies where id = $1`, [id]);
  return rows[0]?.name ?? null;
}

/** Every company's id and name, by name (filters and pickers). */
export async function companyNames(db: Db): Promise<CompanyName[]> {
  return (await db.query<CompanyName>(`select id, name from companies order by name`)).rows;
}

/** How many companies there are. */
export async function countCompanies(db: Db): Promise<number> {
  return (await db.query<{ n: number }>(`select count(*)::int as n from companies`)).rows[0]?.n ?? 0;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Up to two companies whose id (a uuid) or exact name is `idOrName` (the caller refuses an ambiguous name). */
export async function companiesByIdOrName(db: Db, idOrName: string): Promise<CompanyName[]> {
  const byId = UUID.test(idOrName);
  return (await db.query<CompanyName>(`select id, name from companies where ${byId ? 'id = $1::uuid' : 'name = $1'} order by id limit 2`, [idOrName])).rows;
}

export interface CompanySchedule {
  id: string;
  name: string;
  timeZone: string;
  payrollSchedule: string;
}

/** Every company's payroll schedule and time zone, by name. */
export async function companySchedules(db: Db): Promise<CompanySchedule[]> {
  return (await db.query<CompanySchedule>(`select id, name, time_zone as "timeZone", payroll_schedule as "payrollSchedule" from companies order by name`)).rows;
}

/** Company `id`'s schedule, or null (also for an id that is not a uuid). */
export async function companySchedule(db: Db, id: string): Promise<CompanySchedule | null> {
  if (!UUID.test(id)) return null;
  const { rows } = await db.query<CompanySchedule>(
    `select id, name, time_zone as "timeZone", payroll_schedule as "payrollSchedule" from companies where id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** A company with its settings and how many employees and HR users it has (the admin's list, the settings page). */
export interface CompanyRow {
  id: string;
  name: string;
  time_zone: string;
  payroll_schedule: string;
  deadline: string;
  reply_to_email: string | null;
  protect_slips: boolean;
  slip_password: string;
  created_at: Date;
  employees: number;
  hr_users: number;
}

const COMPANY_ROW = `select c.id, c.name, c.time_zone, c.payroll_schedule, c.deadline, c.reply_to_email, c.protect_slips, c.slip_password, c.created_at,
  (select count(*)::int from employees e where e.company_id = c.id) as employees,
  (select count(*)::int from users u where u.company_id = c.id and u.role = 'HR') as hr_users
  from companies c`;

export async function companyRows(db: Db): Promise<CompanyRow[]> {
  return (await db.query<CompanyRow>(`${COMPANY_ROW} order by c.name`)).rows;
}

export async function companyRow(db: Db, id: string): Promise<CompanyRow | null> {
  return (await db.query<CompanyRow>(`${COMPANY_ROW} where c.id = $1`, [id])).rows[0] ?? null;
}

/** True when a company has this name, whatever its case. */
export async function companyNameTaken(db: Db, name: string): Promise<boolean> {
  return ((await db.query(`select 1 from companies where lower(name) = lower($1)`, [name])).rowCount ?? 0) > 0;
}

export interface NewCompanyRow {
  name: string;
  timeZone: string;
  payrollSchedule: string;
  deadline: string;
  replyToEmail: string | null;
  protectSlips: boolean;
}

/** Inserts a company; its id. */
export async function insertCompany(db: Db, c: NewCompanyRow): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into companies (name, time_zone, payroll_schedule, deadline, reply_to_email, protect_slips) values ($1, $2, $3, $4, $5, $6) returning id`,
    [c.name, c.timeZone, c.payrollSchedule, c.deadline, c.replyToEmail, c.protectSlips],
  );
  return rows[0]!.id;
}

/** Sets `protect_slips`; its value before, or null when there is no such company. */
export async function updateProtectSlips(db: Db, id: string, protectSlips: boolean): Promise<{ before: boolean } | null> {
  const { rows } = await db.query<{ before: boolean }>(
    `update companies c set protect_slips = $2 from (select protect_slips as before from companies where id = $1 for update) old
     where c.id = $1 returning old.before`,
    [id, protectSlips],
  );
  return rows[0] ?? null;
}

/** Sets `slip_password` (what a protected slip's password is); its value before, or null when there is no such company. */
export async function updateSlipPassword(db: Db, id: string, source: string): Promise<{ before: string } | null> {
  const { rows } = await db.query<{ before: string }>(
    `update companies c set slip_password = $2 from (select slip_password as before from companies where id = $1 for update) old
     where c.id = $1 returning old.before`,
    [id, source],
  );
  return rows[0] ?? null;
}

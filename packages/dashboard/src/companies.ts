/**
 * Companies (issue 22): an admin creates one (name, time zone, payroll schedule, deadline,
 * optional Reply-To) and lists them; the company's HR or an admin turns password-protected
 * slips on or off. Every change is audited.
 */
import { SLIP_PASSWORD_SOURCES, SLIP_PASSWORD_SQL, type SlipPasswordSource } from '@beton/payroll/slip-password';
import { writeAudit } from '@beton/db/transaction';
import { nextDueTimes } from '@beton/jobs/schedules';
import { z } from 'zod';
import { AppError, notFound } from './errors.ts';
import type { Pool } from './types.ts';
import { prismaFor } from '@beton/db/client';

const DEFAULTS = { timeZone: 'Asia/Dhaka', payrollSchedule: '0 2 1 * *', deadline: '09:00' } as const;

export const newCompanyInput = z.object({
  name: z.string().trim().min(1, 'Enter the company name').max(200),
  /** IANA time zone (Asia/Dhaka): the payroll schedule and the deadline are in it. */
  timeZone: z.string().trim().max(100).default(DEFAULTS.timeZone),
  /** 5-field cron in the company's zone. Default: 02:00 on the 1st. */
  payrollSchedule: z.string().trim().max(100).default(DEFAULTS.payrollSchedule),
  /** Local time by which every slip must be delivered. */
  deadline: z
    .string()
    .trim()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'A time of day like 09:00')
    .default(DEFAULTS.deadline),
  replyToEmail: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.email('Not a valid email address'))
    .optional()
    .or(z.literal('').transform(() => undefined)),
  protectSlips: z.boolean().default(false),
});
export type NewCompany = z.input<typeof newCompanyInput>;

export const companyOutput = z.object({
  id: z.string(),
  name: z.string(),
  timeZone: z.string(),
  payrollSchedule: z.string(),
  deadline: z.string(),
  replyToEmail: z.string().nullable(),
  protectSlips: z.boolean(),
  /** What a protected slip's password is (packages/payroll/src/slip-password.ts). */
  slipPassword: z.enum(SLIP_PASSWORD_SOURCES),
  employees: z.number(),
  hrUsers: z.number(),
  createdAt: z.date(),
});
export type CompanyView = z.infer<typeof companyOutput>;

/** Field errors of a company's time zone and schedule (which zod alone cannot check). */
function scheduleErrors(c: { timeZone: string; payrollSchedule: string }): Record<string, string> {
  const errors: Record<string, string> = {};
  try {
    new Intl.DateTimeFormat('en', { timeZone: c.timeZone });
  } catch {
    errors.timeZone = `Not a time zone: use an IANA name such as ${DEFAULTS.timeZone}`;
    return errors;
  }
  try {
    if (nextDueTimes(c.payrollSchedule, c.timeZone, 1).length === 0) errors.payrollSchedule = 'This schedule never runs';
  } catch {
    errors.payrollSchedule = 'Not a schedule: 5 cron fields, e.g. "0 2 1 * *" (02:00 on the 1st)';
  }
  return errors;
}

export async function createCompany(pool: Pool, raw: NewCompany, actor: string): Promise<CompanyView> {
  const parsed = newCompanyInput.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors = Object.fromEntries(Object.entries(parsed.error.flatten().fieldErrors).map(([k, v]) => [k, v[0] ?? 'invalid']));
    throw new AppError('INVALID_INPUT', Object.values(fieldErrors)[0] ?? 'Invalid company', fieldErrors);
  }
  const input = parsed.data;
  const errors = scheduleErrors(input);
  const exists = await pool.query(`select 1 from companies where lower(name) = lower($1)`, [input.name]);
  if (exists.rowCount) errors.name = 'A company of this name exists';
  if (Object.keys(errors).length) throw new AppError(errors.name ? 'CONFLICT' : 'INVALID_INPUT', Object.values(errors)[0]!, errors);
  const { rows } = await pool.query<{ id: string }>(
    `insert into companies (name, time_zone, payroll_schedule, deadline, reply_to_email, protect_slips) values ($1, $2, $3, $4, $5, $6) returning id`,
    [input.name, input.timeZone, input.payrollSchedule, input.deadline, input.replyToEmail ?? null, input.protectSlips],
  );
  const id = rows[0]!.id;
  await writeAudit(pool, actor, 'create-company', { companyId: id, ...input });
  return getCompany(pool, id);
}

const SELECT = `select c.id, c.name, c.time_zone, c.payroll_schedule, c.deadline, c.reply_to_email, c.protect_slips, c.slip_password, c.created_at,
  (select count(*)::int from employees e where e.company_id = c.id) as employees,
  (select count(*)::int from users u where u.company_id = c.id and u.role = 'HR') as hr_users
  from companies c`;
type Row = {
  id: string;
  name: string;
  time_zone: string;
  payroll_schedule: string;
  deadline: string;
  reply_to_email: string | null;
  protect_slips: boolean;
  slip_password: SlipPasswordSource;
  created_at: Date;
  employees: number;
  hr_users: number;
};
const view = (r: Row): CompanyView => ({
  id: r.id,
  name: r.name,
  timeZone: r.time_zone,
  payrollSchedule: r.payroll_schedule,
  deadline: r.deadline,
  replyToEmail: r.reply_to_email,
  protectSlips: r.protect_slips,
  slipPassword: r.slip_password,
  employees: r.employees,
  hrUsers: r.hr_users,
  createdAt: r.created_at,
});

export async function listCompanies(pool: Pool): Promise<CompanyView[]> {
  return (await pool.query<Row>(`${SELECT} order by c.name`)).rows.map(view);
}

export async function getCompany(pool: Pool, companyId: string): Promise<CompanyView> {
  const r = (await pool.query<Row>(`${SELECT} where c.id = $1`, [companyId])).rows[0];
  if (!r) throw notFound('Company');
  return view(r);
}

/** Password-protected slips on or off for the company (its HR or an admin); audited with the old value. */
export async function setProtectSlips(
  pool: Pool,
  companyId: string,
  protectSlips: boolean,
  actor: string,
): Promise<{ protectSlips: boolean; withoutDateOfBirth: number; withoutSlipPassword: number }> {
  const { rows } = await pool.query<{ before: boolean }>(
    `update companies c set protect_slips = $2 from (select protect_slips as before from companies where id = $1 for update) old
     where c.id = $1 returning old.before`,
    [companyId, protectSlips],
  );
  if (!rows[0]) throw notFound('Company');
  await writeAudit(pool, actor, 'set-protect-slips', { companyId, protectSlips, before: rows[0].before });
  return {
    protectSlips,
    withoutDateOfBirth: await employeesWithoutDateOfBirth(pool, companyId),
    withoutSlipPassword: await employeesWithoutSlipPassword(pool, companyId),
  };
}

/**
 * What the company's protected slips use as their password: each employee's slip code (the
 * default) or the date of birth (the weaker choice: slip-password.ts). Its HR chooses; audited
 * with the old value. Answers how many active employees lack what the rule needs.
 */
export async function setSlipPassword(
  pool: Pool,
  companyId: string,
  source: SlipPasswordSource,
  actor: string,
): Promise<{ slipPassword: SlipPasswordSource; withoutSlipPassword: number }> {
  const { rows } = await pool.query<{ before: string }>(
    `update companies c set slip_password = $2 from (select slip_password as before from companies where id = $1 for update) old
     where c.id = $1 returning old.before`,
    [companyId, source],
  );
  if (!rows[0]) throw notFound('Company');
  await writeAudit(pool, actor, 'set-slip-password', { companyId, slipPassword: source, before: rows[0].before });
  return { slipPassword: source, withoutSlipPassword: await employeesWithoutSlipPassword(pool, companyId) };
}

/** Active employees whose protected slip could not be made under the company's rule (no slip code, or no date of birth). */
export async function employeesWithoutSlipPassword(pool: Pool, companyId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from employees e join companies c on c.id = e.company_id
     where e.company_id = $1 and e.deactivated_at is null and (${SLIP_PASSWORD_SQL}) is null`,
    [companyId],
  );
  return rows[0]?.n ?? 0;
}

/** Employees who cannot get a protected slip (no date of birth): the settings page warns about them. */
export async function employeesWithoutDateOfBirth(pool: Pool, companyId: string): Promise<number> {
  return (
    (await pool.query<{ n: number }>(`select count(*)::int as n from employees where company_id = $1 and date_of_birth is null`, [companyId])).rows[0]?.n ?? 0
  );
}

const COMPANY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How many companies there are (the CLI's payroll refuses an empty database). */
export async function countCompanies(pool: Pool): Promise<number> {
  return prismaFor(pool).company.count();
}

/** A company by its id (a uuid) or its exact name; null when none, or several, have that name. */
export async function findCompany(pool: Pool, idOrName: string): Promise<{ id: string; name: string } | null> {
  const rows = await prismaFor(pool).company.findMany({
    where: COMPANY_ID.test(idOrName) ? { id: idOrName } : { name: idOrName },
    select: { id: true, name: true },
    take: 2,
  });
  return rows.length === 1 ? rows[0]! : null;
}

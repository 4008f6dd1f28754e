/**
 * Companies (issue 22): an admin creates one (name, time zone, payroll schedule, deadline,
 * optional Reply-To) and lists them; the company's HR or an admin turns password-protected
 * slips on or off. Every change is audited.
 */
import { SLIP_PASSWORD_SOURCES, type SlipPasswordSource } from '@beton/payroll/slip-password';
import { COMPANY_DEFAULTS as DEFAULTS } from '@beton/db/company-defaults';
import * as companies from '@beton/db/sql/companies';
import { inTransaction, writeAudit } from '@beton/db/transaction';
import { nextDueTimes } from '@beton/jobs/schedules';
import { z } from 'zod';
import { AppError, notFound } from './errors.ts';
import { countActiveWithoutSlipPassword, countWithoutDateOfBirth } from './sql/protected-slips.ts';
import type { Pool } from './types.ts';

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
  if (await companies.companyNameTaken(pool, input.name)) errors.name = 'A company of this name exists';
  if (Object.keys(errors).length) throw new AppError(errors.name ? 'CONFLICT' : 'INVALID_INPUT', Object.values(errors)[0]!, errors);
  const id = await inTransaction(pool, undefined, async (client) => {
    const id = await companies.insertCompany(client, { ...input, replyToEmail: input.replyToEmail ?? null });
    await writeAudit(client, actor, 'create-company', { companyId: id, ...input });
    return id;
  });
  return getCompany(pool, id);
}

type Row = companies.CompanyRow;
const view = (r: Row): CompanyView => ({
  id: r.id,
  name: r.name,
  timeZone: r.time_zone,
  payrollSchedule: r.payroll_schedule,
  deadline: r.deadline,
  replyToEmail: r.reply_to_email,
  protectSlips: r.protect_slips,
  slipPassword: r.slip_password as SlipPasswordSource,
  employees: r.employees,
  hrUsers: r.hr_users,
  createdAt: r.created_at,
});

export async function listCompanies(pool: Pool): Promise<CompanyView[]> {
  return (await companies.companyRows(pool)).map(view);
}

export async function getCompany(pool: Pool, companyId: string): Promise<CompanyView> {
  const r = await companies.companyRow(pool, companyId);
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
  await inTransaction(pool, undefined, async (client) => {
    const old = await companies.updateProtectSlips(client, companyId, protectSlips);
    if (!old) throw notFound('Company');
    await writeAudit(client, actor, 'set-protect-slips', { companyId, protectSlips, before: old.before });
  });
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
  await inTransaction(pool, undefined, async (client) => {
    const old = await companies.updateSlipPassword(client, companyId, source);
    if (!old) throw notFound('Company');
    await writeAudit(client, actor, 'set-slip-password', { companyId, slipPassword: source, before: old.before });
  });
  return { slipPassword: source, withoutSlipPassword: await employeesWithoutSlipPassword(pool, companyId) };
}

/** Active employees whose protected slip could not be made under the company's rule (no slip code, or no date of birth). */
export function employeesWithoutSlipPassword(pool: Pool, companyId: string): Promise<number> {
  return countActiveWithoutSlipPassword(pool, companyId);
}

/** Employees who cannot get a protected slip (no date of birth): the settings page warns about them. */
export function employeesWithoutDateOfBirth(pool: Pool, companyId: string): Promise<number> {
  return countWithoutDateOfBirth(pool, companyId);
}

/** How many companies there are (the CLI's payroll refuses an empty database). */
export function countCompanies(pool: Pool): Promise<number> {
  return companies.countCompanies(pool);
}

/** A company by its id (a uuid) or its exact name; null when none, or several, have that name. */
export async function findCompany(pool: Pool, idOrName: string): Promise<{ id: string; name: string } | null> {
  const rows = await companies.companiesByIdOrName(pool, idOrName);
  return rows.length === 1 ? rows[0]! : null;
}

/** Every company's id and name, by name (the admin's filters and pickers). */
export function companyNames(pool: Pool): Promise<Array<{ id: string; name: string }>> {
  return companies.companyNames(pool);
}

/** The name of a user's company (null for an admin, who has none), for the pages that show it. */
export async function companyNameOf(pool: Pool, companyId: string | null): Promise<string | null> {
  return companyId ? companies.companyName(pool, companyId) : null;
}

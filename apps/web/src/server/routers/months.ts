import {
  dateOfBirthInput,
  employeeDateOfBirth,
  updateEmployeeDateOfBirth,
  EXPORT_KINDS,
  employeesWithoutDateOfBirth,
  getCompany,
  listMonthExports,
  listMonths,
  monthDetail,
  monthDetailOutput,
  monthSummaryOutput,
  requestMonthExport,
  setProtectSlips,
  employeesWithoutSlipPassword,
  makeSlipCode,
  setSlipPassword,
  slipCodeStatus,
} from '@beton/dashboard';
import { SLIP_PASSWORD_SOURCES } from '@beton/payroll/slip-password';
import { monthSchema } from '@beton/db/month';
import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { hrProcedure, jobs } from '../trpc.ts';

const month = monthSchema;
const exportOutput = z.object({
  id: z.string(),
  month: z.string(),
  kind: z.enum(EXPORT_KINDS),
  status: z.enum(['queued', 'building', 'ready', 'failed']),
  done: z.number(),
  total: z.number(),
  filename: z.string(),
  volume: z.number(),
  volumes: z.number(),
  bytes: z.number().nullable(),
  error: z.string().nullable(),
  requestedBy: z.string(),
  createdAt: z.date(),
  finishedAt: z.date().nullable(),
  expiresAt: z.date().nullable(),
  expired: z.boolean(),
});

/** Past months, their slips and transfers, and the month's exports (issue 22). */
export const monthsRouter = {
  list: hrProcedure.output(z.array(monthSummaryOutput)).query(({ ctx }) => listMonths(ctx.pool, ctx.companyId)),
  get: hrProcedure
    .input(
      z.object({
        month,
        search: z.string().max(100).optional(),
        limit: z.number().int().min(1).max(100).default(25),
        offset: z.number().int().min(0).max(1_000_000).default(0),
      }),
    )
    .output(monthDetailOutput)
    .query(({ ctx, input }) => monthDetail(ctx.pool, ctx.companyId, input.month, input)),
  exports: hrProcedure
    .input(z.object({ month }))
    .output(z.array(exportOutput))
    .query(({ ctx, input }) => listMonthExports(ctx.pool, ctx.companyId, input.month)),
  /** Builds an export in the background (build-month-export job); the same one on its way is returned. Audited. */
  requestExport: hrProcedure
    .input(z.object({ month, kind: z.enum(EXPORT_KINDS) }))
    .output(z.object({ export: exportOutput, created: z.boolean(), volumes: z.number() }))
    .mutation(({ ctx, input }) =>
      requestMonthExport(ctx.pool, jobs(ctx), { companyId: ctx.companyId, month: input.month, kind: input.kind, actor: ctx.actor }),
    ),
} satisfies TRPCRouterRecord;

const settingsOutput = z.object({
  name: z.string(),
  timeZone: z.string(),
  protectSlips: z.boolean(),
  withoutDateOfBirth: z.number(),
  slipPassword: z.enum(SLIP_PASSWORD_SOURCES),
  /** Active employees lacking what the rule needs (a slip code, or a date of birth). */
  withoutSlipPassword: z.number(),
});

/** The HR's own company settings: password-protected slips (audited). */
export const companySettingsRouter = {
  get: hrProcedure.output(settingsOutput).query(async ({ ctx }) => {
    const c = await getCompany(ctx.pool, ctx.companyId);
    return {
      name: c.name,
      timeZone: c.timeZone,
      protectSlips: c.protectSlips,
      withoutDateOfBirth: await employeesWithoutDateOfBirth(ctx.pool, ctx.companyId),
      slipPassword: c.slipPassword,
      withoutSlipPassword: await employeesWithoutSlipPassword(ctx.pool, ctx.companyId),
    };
  }),
  /** What a protected slip's password is: each employee's slip code, or (weaker, warned about) the date of birth. Audited. */
  setSlipPassword: hrProcedure
    .input(z.object({ slipPassword: z.enum(SLIP_PASSWORD_SOURCES) }))
    .output(z.object({ slipPassword: z.enum(SLIP_PASSWORD_SOURCES), withoutSlipPassword: z.number() }))
    .mutation(({ ctx, input }) => setSlipPassword(ctx.pool, ctx.companyId, input.slipPassword, ctx.actor)),
  setProtectSlips: hrProcedure
    .input(z.object({ protectSlips: z.boolean() }))
    .output(z.object({ protectSlips: z.boolean(), withoutDateOfBirth: z.number(), withoutSlipPassword: z.number() }))
    .mutation(({ ctx, input }) => setProtectSlips(ctx.pool, ctx.companyId, input.protectSlips, ctx.actor)),
} satisfies TRPCRouterRecord;

const employeeId = z.number().int().positive().max(2_147_483_647);

/** An employee's slip code: whether one is set (never the code), and a new one — answered this once — for HR to hand over. Audited without the code. */
export const slipCodeRouter = {
  get: hrProcedure
    .input(z.object({ id: employeeId }))
    .output(z.object({ set: z.boolean(), setAt: z.date().nullable(), protectSlips: z.boolean(), slipPassword: z.enum(SLIP_PASSWORD_SOURCES) }))
    .query(({ ctx, input }) => slipCodeStatus(ctx.pool, ctx.companyId, input.id)),
  make: hrProcedure
    .input(z.object({ id: employeeId }))
    .output(z.object({ code: z.string(), setAt: z.date() }))
    .mutation(({ ctx, input }) => makeSlipCode(ctx.pool, ctx.companyId, input.id, ctx.actor)),
} satisfies TRPCRouterRecord;

/** An employee's date of birth: the password of their protected slips when the company chose it (audited without the date). */
export const dateOfBirthRouter = {
  get: hrProcedure
    .input(z.object({ id: employeeId }))
    .output(z.object({ dateOfBirth: z.string().nullable(), protectSlips: z.boolean() }))
    .query(({ ctx, input }) => employeeDateOfBirth(ctx.pool, ctx.companyId, input.id)),
  set: hrProcedure
    .input(z.object({ id: employeeId, dateOfBirth: dateOfBirthInput }))
    .output(z.object({ dateOfBirth: z.string().nullable() }))
    .mutation(({ ctx, input }) => updateEmployeeDateOfBirth(ctx.pool, ctx.companyId, input.id, input.dateOfBirth, ctx.actor)),
} satisfies TRPCRouterRecord;

/**
 * HR's employees and imports (issue 22): thin procedures over @beton/people and @beton/payroll,
 * every one scoped to the HR's company. The employee forms' input is validated by the services
 * (one field-error shape for the pages: field → reason key).
 */
import { changeSalary, createEmployee, employeeRecord, setEmployeeActive, updateEmployeeDetails } from '@beton/people/employees';
import { importView, listImports, requestApply, type EnqueueImportJob } from '@beton/people/import/service';
import { monthSchema } from '@beton/db/month';
import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { people } from '../people-adapter.ts';
import { resendCorrectedSlip } from '../payroll-adapter.ts';
import { hrProcedure, jobs, type Context } from '../trpc.ts';

const month = monthSchema;
const employeeId = z.number().int().positive().max(2_147_483_647);
const importId = z.object({ id: z.string().uuid() });

const salaryOutput = z.object({
  basic: z.number(),
  houseRent: z.number(),
  medical: z.number(),
  conveyance: z.number(),
  tax: z.number(),
  providentFund: z.number(),
});
const recordOutput = z.object({
  id: z.number(),
  code: z.string(),
  nameLatin: z.string(),
  nameBengali: z.string(),
  email: z.string(),
  bankAccount: z.string(),
  deactivatedAt: z.date().nullable(),
  currentMonth: z.string(),
  salary: salaryOutput,
  salaryHistory: z.array(z.object({ effectiveMonth: z.string(), components: salaryOutput, createdBy: z.string(), updatedAt: z.date() })),
});
const importOutput = z.object({
  id: z.string(),
  filename: z.string(),
  format: z.string(),
  bytes: z.number(),
  effectiveMonth: z.string(),
  status: z.enum(['uploaded', 'validating', 'validated', 'applying', 'applied', 'failed']),
  phaseRows: z.number(),
  rowsTotal: z.number().nullable(),
  counts: z.object({ new: z.number(), changed: z.number(), unchanged: z.number(), errors: z.number() }),
  applied: z.object({ rows: z.number(), new: z.number(), changed: z.number() }),
  preview: z.array(
    z.object({ row: z.number(), code: z.string(), name: z.string(), action: z.enum(['new', 'changed', 'unchanged', 'error']), fields: z.array(z.string()) }),
  ),
  errors: z.array(z.object({ row: z.number(), column: z.string(), reasonEn: z.string(), reasonBn: z.string() })),
  failure: z.string().nullable(),
  failureReason: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.date(),
  appliedAt: z.date().nullable(),
  stalled: z.boolean(),
});

/** The import job, queued in the service's transaction. */
function enqueueImport(ctx: Context): EnqueueImportJob {
  return (client, payload) => jobs(ctx).enqueue('import-employees', payload, { client });
}

export const peopleRouter = {
  record: hrProcedure
    .input(z.object({ id: employeeId }))
    .output(recordOutput)
    .query(({ ctx, input }) => people(() => employeeRecord(ctx.pool, ctx.companyId, input.id))),
  create: hrProcedure
    .input(z.object({ employee: z.unknown() }))
    .output(z.object({ id: z.number() }))
    .mutation(({ ctx, input }) => people(() => createEmployee(ctx.pool, { companyId: ctx.companyId, actor: ctx.actor, input: input.employee }))),
  update: hrProcedure
    .input(z.object({ id: employeeId, details: z.unknown() }))
    .output(z.object({ changed: z.array(z.string()) }))
    .mutation(({ ctx, input }) =>
      people(() => updateEmployeeDetails(ctx.pool, { companyId: ctx.companyId, employeeId: input.id, actor: ctx.actor, input: input.details })),
    ),
  setActive: hrProcedure
    .input(z.object({ id: employeeId, active: z.boolean() }))
    .output(z.object({ deactivatedAt: z.date().nullable(), changed: z.boolean() }))
    .mutation(({ ctx, input }) =>
      people(() => setEmployeeActive(ctx.pool, { companyId: ctx.companyId, employeeId: input.id, actor: ctx.actor, active: input.active })),
    ),
  changeSalary: hrProcedure
    .input(z.object({ id: employeeId, change: z.unknown() }))
    .output(z.object({ changed: z.boolean(), paidMonths: z.array(z.string()) }))
    .mutation(({ ctx, input }) =>
      people(() => changeSalary(ctx.pool, { companyId: ctx.companyId, employeeId: input.id, actor: ctx.actor, input: input.change })),
    ),
  /** After a salary correction of a paid month: the corrected slip (the month's one slip, or a copy if the old one arrived). */
  resendCorrected: hrProcedure
    .input(z.object({ id: employeeId, month }))
    .output(z.object({ outcome: z.enum(['resent', 'copy', 'in-progress']), jobId: z.number(), to: z.string().optional() }))
    .mutation(({ ctx, input }) =>
      resendCorrectedSlip({ pool: ctx.pool, jobs: jobs(ctx), companyId: ctx.companyId, employeeId: input.id, month: input.month, requestedBy: ctx.actor }),
    ),
} satisfies TRPCRouterRecord;

/** Imports: the upload itself is POST /api/imports (a file body, not JSON); these read and confirm. */
export const importsRouter = {
  list: hrProcedure.output(z.array(importOutput)).query(({ ctx }) => listImports(ctx.pool, ctx.companyId)),
  get: hrProcedure
    .input(importId)
    .output(importOutput)
    .query(({ ctx, input }) => people(() => importView(ctx.pool, ctx.companyId, input.id))),
  apply: hrProcedure
    .input(importId)
    .output(z.object({ status: z.string(), queued: z.boolean() }))
    .mutation(({ ctx, input }) =>
      people(() => requestApply(ctx.pool, { companyId: ctx.companyId, importId: input.id, actor: ctx.actor, enqueue: enqueueImport(ctx) })),
    ),
} satisfies TRPCRouterRecord;

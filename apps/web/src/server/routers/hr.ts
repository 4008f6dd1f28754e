import { monthSchema } from '@beton/db/month';
import {
  addressesToFix,
  addressToFixOutput,
  deliveryCountsOutput,
  deliveryEventOutput,
  employeeDeliveryEvents,
  runDeliveryCounts,
  unconfirmedEmailOutput,
  unconfirmedEmails,
} from '@beton/dashboard';
import {
  approvalPlan,
  approvalPlanOutput,
  employeeDetail,
  employeeDetailOutput,
  employeeListOutput,
  listEmployees,
  listRunProgress,
  runForApproval,
  runProgress,
  runProgressOutput,
  slipJobStatus,
  slipJobStatusOutput,
  SLIP_STATUSES,
  updateEmployeeEmail,
} from '@beton/dashboard';
import { actorOutput, describeActor } from '@beton/db/actors';
import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { approvePayroll, resendSlip, sendSlipCopy, sendUnconfirmedAgain } from '../payroll-adapter.ts';
import { hrProcedure, jobs } from '../trpc.ts';

const month = monthSchema;
const runId = z.object({ runId: z.string().uuid() });
const employeeId = z.number().int().positive().max(2_147_483_647);
const jobId = z.number().int().positive();

export const runsRouter = {
  list: hrProcedure.output(z.array(runProgressOutput)).query(({ ctx }) => listRunProgress(ctx.pool, ctx.companyId)),
  get: hrProcedure
    .input(runId)
    .output(runProgressOutput)
    .query(({ ctx, input }) => runProgress(ctx.pool, ctx.companyId, input.runId)),
  /** What "Approve payroll" would do (how many reminder emails, when), or when and by whom it was approved: said before it asks. */
  approvalPlan: hrProcedure
    .input(runId)
    .output(approvalPlanOutput)
    .query(({ ctx, input }) => approvalPlan(ctx.pool, ctx.companyId, input.runId)),
  /** Approves once; again (another tab), it enqueues nothing and says when and by whom it was approved. */
  approve: hrProcedure
    .input(runId)
    .output(z.object({ reminders: z.number(), runAt: z.date(), already: z.object({ approvedAt: z.date(), approvedBy: actorOutput.nullable() }).nullable() }))
    .mutation(async ({ ctx, input }) => {
      const run = await runForApproval(ctx.pool, ctx.companyId, input.runId);
      const result = await approvePayroll({ pool: ctx.pool, jobs: jobs(ctx), companyId: ctx.companyId, month: run.month, approvedBy: ctx.actor });
      return {
        ...result,
        already: result.already && {
          approvedAt: result.already.approvedAt,
          approvedBy: result.already.approvedBy ? await describeActor(ctx.pool, result.already.approvedBy) : null,
        },
      };
    }),
} satisfies TRPCRouterRecord;

export const employeesRouter = {
  list: hrProcedure
    .input(
      z.object({
        month,
        search: z.string().max(100).optional(),
        status: z.enum(SLIP_STATUSES).optional(),
        limit: z.number().int().min(1).max(100).default(25),
        offset: z.number().int().min(0).max(1_000_000).default(0),
      }),
    )
    .output(employeeListOutput)
    .query(({ ctx, input }) => listEmployees(ctx.pool, ctx.companyId, input)),
  get: hrProcedure
    .input(z.object({ id: employeeId }))
    .output(employeeDetailOutput)
    .query(({ ctx, input }) => employeeDetail(ctx.pool, ctx.companyId, input.id)),
  // The address is validated by the service (a field error, nothing saved), not here, so
  // the form gets one consistent error shape.
  updateEmail: hrProcedure
    .input(z.object({ id: employeeId, email: z.string().max(320) }))
    .output(z.object({ email: z.string() }))
    .mutation(({ ctx, input }) => updateEmployeeEmail(ctx.pool, ctx.companyId, input.id, input.email, ctx.actor)),
  /** The month's one slip (R13): a new attempt, the one on its way, or "already delivered" — never a second email. */
  resend: hrProcedure
    .input(z.object({ id: employeeId, month }))
    .output(
      z.discriminatedUnion('outcome', [
        z.object({ outcome: z.literal('created'), jobId: z.number(), resend: z.number(), created: z.literal(true) }),
        z.object({ outcome: z.literal('in-progress'), jobId: z.number(), resend: z.number().nullable(), created: z.literal(false), promoted: z.boolean() }),
        z.object({ outcome: z.literal('delivered'), created: z.literal(false), key: z.string(), sentAt: z.date().nullable(), to: z.string() }),
      ]),
    )
    .mutation(({ ctx, input }) =>
      resendSlip({ pool: ctx.pool, jobs: jobs(ctx), companyId: ctx.companyId, employeeId: input.id, month: input.month, requestedBy: ctx.actor }),
    ),
  /** "Send another copy" (confirmed in the page): a deliberate second email of a delivered slip; CONFLICT before delivery. */
  sendCopy: hrProcedure
    .input(z.object({ id: employeeId, month }))
    .output(z.object({ jobId: z.number(), copy: z.number(), created: z.boolean(), to: z.string() }))
    .mutation(({ ctx, input }) =>
      sendSlipCopy({ pool: ctx.pool, jobs: jobs(ctx), companyId: ctx.companyId, employeeId: input.id, month: input.month, requestedBy: ctx.actor }),
    ),
  resendStatus: hrProcedure
    .input(z.object({ jobId }))
    .output(slipJobStatusOutput)
    .query(({ ctx, input }) => slipJobStatus(ctx.pool, ctx.companyId, input.jobId)),
} satisfies TRPCRouterRecord;

/** Delivery truth from the Event Webhook (issue 16): kept apart from the run card and the employee page. */
export const deliveryRouter = {
  runCounts: hrProcedure
    .input(runId)
    .output(deliveryCountsOutput)
    .query(({ ctx, input }) => runDeliveryCounts(ctx.pool, ctx.companyId, input.runId)),
  addressesToFix: hrProcedure.output(z.array(addressToFixOutput)).query(({ ctx }) => addressesToFix(ctx.pool, ctx.companyId)),
  employeeEvents: hrProcedure
    .input(z.object({ id: employeeId }))
    .output(z.array(deliveryEventOutput))
    .query(({ ctx, input }) => employeeDeliveryEvents(ctx.pool, ctx.companyId, input.id)),
  /** The company's unconfirmed emails (no proof, no evidence): a person decides. */
  unconfirmed: hrProcedure.output(z.array(unconfirmedEmailOutput)).query(({ ctx }) => unconfirmedEmails(ctx.pool, ctx.companyId)),
  /** "Send again" (may arrive twice; audited). */
  sendAgain: hrProcedure
    .input(z.object({ key: z.string().min(1).max(200) }))
    .output(z.object({ jobKey: z.string() }))
    .mutation(({ ctx, input }) => sendUnconfirmedAgain({ pool: ctx.pool, jobs: jobs(ctx), key: input.key, actor: ctx.actor, companyId: ctx.companyId })),
} satisfies TRPCRouterRecord;

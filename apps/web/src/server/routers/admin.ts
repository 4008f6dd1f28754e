import { emailAccountOutput, emailAccountStatus, resumeEmailQueue } from '@beton/dashboard';
import {
  ERROR_KINDS,
  FAILED_VIEWS,
  failedFacetsOutput,
  failedListOutput,
  jobDetailOutput,
  queuesOutput,
  schedulesOutput,
  stuckJobsOutput,
  workersOutput,
  countFailedJobs,
  discardJobs,
  failedFacets,
  failedJobDetail,
  listFailedJobs,
  listSchedules,
  listStuckJobs,
  listWorkers,
  queuesOverview,
  retryImpact,
  retryJobs,
  runNowPlan,
  runNowPlanOutput,
  runNowResultOutput,
  runScheduleNow,
} from '@beton/dashboard';
import { AppError, companyNames, companyOutput, createCompany, listCompanies, newCompanyInput, setProtectSlips } from '@beton/dashboard';
import { listQueuePauses, pauseQueueByAdmin, queuePauseOutput, resumeQueueByAdmin } from '@beton/dashboard';
import { daySchema } from '@beton/db/month';
import { env } from '../../env.ts';
import { createUser, listUsers, newUserInput, UserInputError } from '@beton/db/users';
import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { sendUnconfirmedAgain } from '../payroll-adapter.ts';
import { adminProcedure, jobs } from '../trpc.ts';

const day = daySchema;
const filter = z.object({
  companyId: z.string().uuid().optional(),
  task: z.string().max(100).optional(),
  errorCode: z.string().max(100).optional(),
  errorKind: z.enum(ERROR_KINDS).optional(),
  from: z.date().optional(),
  to: z.date().optional(),
  fromDay: day.optional(),
  toDay: day.optional(),
  q: z.string().max(200).optional(),
});
/**
 * "All that match": an explicit filter and the count the admin confirmed (a changed count →
 * CONFLICT). A filter without a condition means every failed job, and must say so
 * (`matchAll: true`): no request acts on the whole DLQ by leaving fields out.
 */
const matching = z
  .object({ filter, expected: z.number().int().min(0), matchAll: z.literal(true).optional() })
  .strict()
  .refine((m) => m.matchAll === true || Object.values(m.filter).some((v) => v !== undefined), {
    path: ['filter'],
    message: 'an empty filter matches every failed job: send matchAll: true to mean that',
  });
const queueName = z.object({ queue: z.string().min(1).max(100) });
const ids = z.object({ ids: z.array(z.number().int().positive()).min(1).max(1000) });

export const adminRouter = {
  failedList: adminProcedure
    .input(
      filter.extend({
        limit: z.number().int().min(1).max(200).default(50),
        offset: z.number().int().min(0).default(0),
        view: z.enum(FAILED_VIEWS).default('failed'),
      }),
    )
    .output(failedListOutput)
    .query(({ ctx, input }) => {
      const { limit, offset, view, ...f } = input;
      return listFailedJobs(ctx.pool, f, { limit, offset, view });
    }),
  failedCount: adminProcedure
    .input(filter)
    .output(z.number())
    .query(({ ctx, input }) => countFailedJobs(ctx.pool, input)),
  failedFacets: adminProcedure.output(failedFacetsOutput).query(({ ctx }) => failedFacets(ctx.pool)),
  job: adminProcedure
    .input(z.object({ id: z.number().int().positive() }))
    .output(jobDetailOutput)
    .query(({ ctx, input }) => failedJobDetail(ctx.pool, input.id, { traceLinkTemplate: env().BETON_TRACE_LINK_TEMPLATE })),
  /** What retrying these failed jobs (by ids, or all matching a filter) would do: how many, per task, and how many email someone. */
  retryImpact: adminProcedure
    .input(z.union([ids, z.object({ filter })]))
    .output(z.object({ total: z.number(), emails: z.number(), byTask: z.array(z.object({ task: z.string(), n: z.number() })) }))
    .query(({ ctx, input }) => retryImpact(ctx.pool, input)),
  retry: adminProcedure
    .input(ids)
    .output(z.object({ retried: z.number() }))
    .mutation(({ ctx, input }) => retryJobs(ctx.pool, { ids: input.ids }, ctx.actor)),
  retryMatching: adminProcedure
    .input(matching)
    .output(z.object({ retried: z.number() }))
    .mutation(({ ctx, input: { filter: f, expected } }) => retryJobs(ctx.pool, { filter: f, expected }, ctx.actor)),
  discard: adminProcedure
    .input(ids)
    .output(z.object({ discarded: z.number() }))
    .mutation(({ ctx, input }) => discardJobs(ctx.pool, { ids: input.ids }, ctx.actor)),
  discardMatching: adminProcedure
    .input(matching)
    .output(z.object({ discarded: z.number() }))
    .mutation(({ ctx, input: { filter: f, expected } }) => discardJobs(ctx.pool, { filter: f, expected }, ctx.actor)),
  queues: adminProcedure.output(queuesOutput).query(({ ctx }) => queuesOverview(ctx.pool)),
  workers: adminProcedure.output(workersOutput).query(({ ctx }) => listWorkers(ctx.pool)),
  stuck: adminProcedure.output(stuckJobsOutput).query(({ ctx }) => listStuckJobs(ctx.pool)),
  schedules: adminProcedure.output(schedulesOutput).query(({ ctx }) => listSchedules(ctx.pool)),
  /** What "Run now" would do (a payroll: its month, how many slips, whether it was already run): said before it asks. */
  runNowPlan: adminProcedure
    .input(z.object({ id: z.string().min(1).max(200) }))
    .output(runNowPlanOutput)
    .query(({ ctx, input }) => runNowPlan(ctx.pool, input.id)),
  runScheduleNow: adminProcedure
    .input(z.object({ id: z.string().min(1).max(200) }))
    .output(runNowResultOutput)
    .mutation(({ ctx, input }) => runScheduleNow(ctx.pool, jobs(ctx), input.id, ctx.actor)),
  emailAccount: adminProcedure.output(emailAccountOutput).query(({ ctx }) => emailAccountStatus(ctx.pool)),
  /** Paused queues (an admin's pause or an account fault): why and since when. */
  queuePauses: adminProcedure.output(z.array(queuePauseOutput)).query(({ ctx }) => listQueuePauses(ctx.pool)),
  /** Pause / resume one queue for every worker (jobs stay queued; audited). */
  pauseQueue: adminProcedure
    .input(queueName)
    .output(z.object({ paused: z.boolean() }))
    .mutation(({ ctx, input }) => pauseQueueByAdmin(ctx.pool, input.queue, ctx.actor)),
  resumeQueue: adminProcedure
    .input(queueName)
    .output(z.object({ resumed: z.boolean() }))
    .mutation(({ ctx, input }) => resumeQueueByAdmin(ctx.pool, input.queue, ctx.actor)),
  resumeEmail: adminProcedure.output(z.object({ resumed: z.boolean() })).mutation(({ ctx }) => resumeEmailQueue(ctx.pool, ctx.actor)),
  /** "Send again" on an unconfirmed email (may arrive twice; audited). */
  sendUnconfirmedAgain: adminProcedure
    .input(z.object({ key: z.string().min(1).max(200) }))
    .output(z.object({ jobKey: z.string() }))
    .mutation(({ ctx, input }) => sendUnconfirmedAgain({ pool: ctx.pool, jobs: jobs(ctx), key: input.key, actor: ctx.actor })),
  /** Users with their company and live sessions; the companies a new HR manager can belong to. */
  users: adminProcedure
    .output(
      z.object({
        users: z.array(
          z.object({
            id: z.string(),
            email: z.string(),
            name: z.string(),
            role: z.enum(['HR', 'ADMIN']),
            companyId: z.string().nullable(),
            companyName: z.string().nullable(),
            mustChangePassword: z.boolean(),
            createdAt: z.date(),
            activeSessions: z.number(),
          }),
        ),
        companies: z.array(z.object({ id: z.string(), name: z.string() })),
      }),
    )
    .query(async ({ ctx }) => ({
      users: await listUsers(ctx.pool),
      companies: await companyNames(ctx.pool),
    })),
  /** Companies with their settings, employees and HR users (issue 22). */
  companies: adminProcedure.output(z.array(companyOutput)).query(({ ctx }) => listCompanies(ctx.pool)),
  /** A new company (name, time zone, payroll schedule, deadline); its HR users are then created on the users page. Audited. */
  createCompany: adminProcedure
    .input(newCompanyInput.partial({ timeZone: true, payrollSchedule: true, deadline: true, protectSlips: true }))
    .output(companyOutput)
    .mutation(({ ctx, input }) => createCompany(ctx.pool, input, ctx.actor)),
  /** Password-protected slips of a company, as its HR can set them. Audited. */
  setProtectSlips: adminProcedure
    .input(z.object({ companyId: z.string().uuid(), protectSlips: z.boolean() }))
    .output(z.object({ protectSlips: z.boolean(), withoutDateOfBirth: z.number(), withoutSlipPassword: z.number() }))
    .mutation(({ ctx, input }) => setProtectSlips(ctx.pool, input.companyId, input.protectSlips, ctx.actor)),
  /** A new user with a one-time password, shown once to the admin, to be changed at the first sign-in; audited. */
  createUser: adminProcedure
    .input(newUserInput)
    .output(z.object({ id: z.string(), email: z.string(), oneTimePassword: z.string() }))
    .mutation(async ({ ctx, input }) => {
      try {
        const { id, email, oneTimePassword } = await createUser(ctx.pool, input, ctx.actor);
        return { id, email, oneTimePassword };
      } catch (error) {
        if (error instanceof UserInputError)
          throw new AppError(error.fieldErrors.email === 'already a user' ? 'CONFLICT' : 'INVALID_INPUT', error.message, error.fieldErrors);
        throw error;
      }
    }),
} satisfies TRPCRouterRecord;

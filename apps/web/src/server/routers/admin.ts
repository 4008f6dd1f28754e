import { ERROR_KINDS, FAILED_VIEWS, failedFacetsOutput, failedListOutput, jobDetailOutput, queuesOutput, schedulesOutput, stuckJobsOutput, workersOutput, countFailedJobs, discardJobs, failedFacets, failedJobDetail, listFailedJobs, listSchedules, listStuckJobs, listWorkers, queuesOverview, retryJobs, runScheduleNow } from '@beton/dashboard';
import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { adminProcedure, jobs } from '../trpc.ts';

const day = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, 'a day looks like 2026-11-30');
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
/** "All that match": `expected` is the count the admin confirmed (a changed count → CONFLICT). */
const matching = filter.extend({ expected: z.number().int().min(0).optional() });
const ids = z.object({ ids: z.array(z.number().int().positive()).min(1).max(1000) });

export const adminRouter = {
  failedList: adminProcedure
    .input(filter.extend({ limit: z.number().int().min(1).max(200).default(50), offset: z.number().int().min(0).default(0), view: z.enum(FAILED_VIEWS).default('failed') }))
    .output(failedListOutput)
    .query(({ ctx, input }) => {
      const { limit, offset, view, ...f } = input;
      return listFailedJobs(ctx.pool, f, { limit, offset, view });
    }),
  failedCount: adminProcedure.input(filter).output(z.number()).query(({ ctx, input }) => countFailedJobs(ctx.pool, input)),
  failedFacets: adminProcedure.output(failedFacetsOutput).query(({ ctx }) => failedFacets(ctx.pool)),
  job: adminProcedure.input(z.object({ id: z.number().int().positive() })).output(jobDetailOutput).query(({ ctx, input }) => failedJobDetail(ctx.pool, input.id)),
  retry: adminProcedure.input(ids).output(z.object({ retried: z.number() })).mutation(({ ctx, input }) => retryJobs(ctx.pool, { ids: input.ids }, ctx.actor)),
  retryMatching: adminProcedure.input(matching).output(z.object({ retried: z.number() })).mutation(({ ctx, input: { expected, ...f } }) => retryJobs(ctx.pool, { filter: f, expected }, ctx.actor)),
  discard: adminProcedure.input(ids).output(z.object({ discarded: z.number() })).mutation(({ ctx, input }) => discardJobs(ctx.pool, { ids: input.ids }, ctx.actor)),
  discardMatching: adminProcedure.input(matching).output(z.object({ discarded: z.number() })).mutation(({ ctx, input: { expected, ...f } }) => discardJobs(ctx.pool, { filter: f, expected }, ctx.actor)),
  queues: adminProcedure.output(queuesOutput).query(({ ctx }) => queuesOverview(ctx.pool)),
  workers: adminProcedure.output(workersOutput).query(({ ctx }) => listWorkers(ctx.pool)),
  stuck: adminProcedure.output(stuckJobsOutput).query(({ ctx }) => listStuckJobs(ctx.pool)),
  schedules: adminProcedure.output(schedulesOutput).query(({ ctx }) => listSchedules(ctx.pool)),
  runScheduleNow: adminProcedure
    .input(z.object({ id: z.string().min(1).max(200) }))
    .output(z.object({ jobId: z.number(), created: z.boolean() }))
    .mutation(({ ctx, input }) => runScheduleNow(ctx.pool, jobs(ctx), input.id, ctx.actor)),
} satisfies TRPCRouterRecord;

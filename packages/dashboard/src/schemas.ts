import { actorOutput } from '@beton/db/actors';
import { z } from 'zod';
import { STUCK_REASONS } from './admin.ts';
import { RESEND_STAGES, SLIP_STATUSES } from './employees.ts';
import { SLIP_STAGES } from './slip-states.ts';
import { JOB_STATUSES } from './types.ts';

/** Output schemas of the read models: the API validates what it sends (tRPC `.output`). */
/** Which attempt at a slip (slip-attempts.ts attemptOf): the monthly run's, resend #n, copy #n. */
const slipAttempt = z.object({ kind: z.enum(['run', 'resend', 'copy']), n: z.number().nullable() });
const supersededBy = slipAttempt.extend({ key: z.string(), code: z.string().nullable() });
const counts = z.object(Object.fromEntries(JOB_STATUSES.map((s) => [s, z.number()])) as Record<(typeof JOB_STATUSES)[number], z.ZodNumber>);
const stages = z.object(Object.fromEntries(SLIP_STAGES.map((s) => [s, z.number()])) as Record<(typeof SLIP_STAGES)[number], z.ZodNumber>);
const etaFacts = z.object({
  case: z.enum(['done', 'measuring', 'no-rate', 'over-a-week', 'on-time', 'late', 'after-deadline']),
  total: z.number(),
  failed: z.number(),
  completedAt: z.date().nullable(),
  deadline: z.date(),
  timeZone: z.string(),
  passedMs: z.number(),
  basis: z.enum(['run-rate', 'queue', 'none']),
  rate: z.number().nullable(),
  finishAt: z.date().nullable(),
  marginMs: z.number().nullable(),
});

export const runProgressOutput = z.object({
  id: z.string(),
  month: z.string(),
  status: z.string(),
  startedAt: z.date(),
  completedAt: z.date().nullable(),
  approvedAt: z.date().nullable(),
  approvedBy: actorOutput.nullable(),
  remindersAt: z.date().nullable(),
  reminders: counts,
  employeeCount: z.number(),
  render: counts,
  email: counts,
  slips: stages,
  withoutJob: z.number(),
  sent: z.number(),
  stuck: z.number(),
  failed: z.number(),
  runningTooLong: z.number(),
  stranded: z.number(),
  remaining: z.number(),
  line: z.string(),
  lineBn: z.string(),
  throughputPerSecond: z.number().nullable(),
  deadline: z.date(),
  deadlineText: z.string(),
  deadlineTextBn: z.string(),
  timeZone: z.string(),
  schedule: z.object({
    firstSentAt: z.date().nullable(),
    expectedStartAt: z.date().nullable(),
    expectedFinishAt: z.date().nullable(),
    basis: z.enum(['run-rate', 'queue', 'none']),
    slipsAhead: z.number().nullable(),
  }),
  eta: z.union([
    z.object({ kind: z.enum(['done', 'idle']), text: z.string(), textBn: z.string(), facts: etaFacts }),
    z.object({ kind: z.enum(['on-time', 'late']), finishAt: z.date(), text: z.string(), textBn: z.string(), facts: etaFacts }),
  ]),
});

export const employeeListOutput = z.object({
  total: z.number(),
  rows: z.array(
    z.object({
      id: z.number(),
      code: z.string(),
      nameLatin: z.string(),
      nameBengali: z.string(),
      email: z.string(),
      slipStatus: z.enum(SLIP_STATUSES),
      lastErrorCode: z.string().nullable(),
      /** A leaver: when HR deactivated them (null while active). */
      deactivatedAt: z.date().nullable(),
    }),
  ),
});

/** HR's view of an attempt: no worker (host, pid, queue), no raw error text (employees.ts AttemptView). */
const attempt = z.object({
  attempt: z.number(),
  startedAt: z.date(),
  finishedAt: z.date().nullable(),
  durationMs: z.number().nullable(),
  outcome: z.string(),
  errorCode: z.string().nullable(),
});

export const employeeDetailOutput = z.object({
  id: z.number(),
  code: z.string(),
  nameLatin: z.string(),
  nameBengali: z.string(),
  email: z.string(),
  months: z.array(
    z.object({
      month: z.string(),
      state: z.enum(SLIP_STATUSES),
      jobs: z.array(
        z.object({
          id: z.number(),
          taskName: z.string(),
          status: z.string(),
          attempt: slipAttempt.nullable(),
          supersededBy: supersededBy.nullable(),
          idempotencyKey: z.string(),
          month: z.string().nullable(),
          attempts: z.number(),
          runAt: z.date(),
          finishedAt: z.date().nullable(),
          lastErrorCode: z.string().nullable(),
          attemptLog: z.array(attempt),
        }),
      ),
      slips: z.array(z.object({ id: z.number(), key: z.string(), attempt: slipAttempt, bytes: z.number(), createdAt: z.date() })),
      resends: z.array(z.object({ n: z.number(), copy: z.boolean(), requestedBy: actorOutput, requestedAt: z.date(), jobId: z.number() })),
      delivered: z.object({ key: z.string(), attempt: slipAttempt, sentAt: z.date().nullable(), to: z.string() }).nullable(),
    }),
  ),
});

export const slipJobStatusOutput = z.object({
  render: z.enum(JOB_STATUSES),
  email: z.enum(JOB_STATUSES).nullable(),
  overall: z.enum(RESEND_STAGES),
  retrying: z.boolean(),
  error: z.string().nullable(),
  supersededBy: slipAttempt.nullable(),
});

export const failedListOutput = z.object({
  total: z.number(),
  rows: z.array(
    z.object({
      id: z.number(),
      taskName: z.string(),
      queue: z.string(),
      companyId: z.string().nullable(),
      companyName: z.string().nullable(),
      employeeId: z.number().nullable(),
      attempts: z.number(),
      lastErrorCode: z.string().nullable(),
      lastErrorKind: z.string().nullable(),
      lastError: z.string().nullable(),
      finishedAt: z.date().nullable(),
      supersededBy: supersededBy.nullable(),
    }),
  ),
});

export const failedFacetsOutput = z.object({
  errorCodes: z.array(z.object({ code: z.string(), n: z.number() })),
  tasks: z.array(z.string()),
  companies: z.array(z.object({ id: z.string(), name: z.string() })),
});

export const jobDetailOutput = z.object({
  id: z.number(),
  taskName: z.string(),
  queue: z.string(),
  status: z.string(),
  payload: z.unknown(),
  attempts: z.number(),
  maxAttempts: z.number(),
  idempotencyKey: z.string(),
  runAt: z.date(),
  finishedAt: z.date().nullable(),
  lastError: z.string().nullable(),
  lastErrorCode: z.string().nullable(),
  lastErrorKind: z.string().nullable(),
  companyId: z.string().nullable(),
  employeeId: z.number().nullable(),
  payrollRunId: z.string().nullable(),
  supersededBy: supersededBy.nullable(),
  /** The job's trace (docs/tracing.md): null when it was enqueued with tracing off. */
  traceId: z.string().nullable(),
  /** The trace in the operators' tracing tool, when BETON_TRACE_LINK_TEMPLATE is set. */
  traceUrl: z.string().nullable(),
  attemptLog: z.array(
    z.object({
      attempt: z.number(),
      workerId: z.string().nullable(),
      startedAt: z.date(),
      finishedAt: z.date().nullable(),
      durationMs: z.number().nullable(),
      outcome: z.string(),
      errorKind: z.string().nullable(),
      errorCode: z.string().nullable(),
      errorMessage: z.string().nullable(),
      errorStack: z.string().nullable(),
      retryDelayMs: z.number().nullable(),
    }),
  ),
});

export const queuesOutput = z.object({
  queues: z.array(
    z.object({
      queue: z.string(),
      counts,
      delayed: z.number(),
      oldestWaitingSeconds: z.number().nullable(),
      perMinute: z.array(z.object({ minute: z.date(), done: z.number(), failed: z.number() })),
    }),
  ),
  delayed: z.array(z.object({ queue: z.string(), task: z.string(), dueAt: z.date(), n: z.number() })),
  limits: z.array(z.object({ key: z.string(), inUse: z.number(), max: z.number() })),
  rates: z.array(z.object({ key: z.string(), perSecond: z.number(), inUsePerSecond: z.number() })),
  rateWindowSeconds: z.number(),
  limitDefs: z.array(
    z.object({
      queue: z.string(),
      limits: z.object({
        concurrency: z.object({ key: z.string(), max: z.number(), reserved: z.number().optional() }).optional(),
        rate: z.object({ key: z.string(), perSecond: z.number() }).optional(),
      }),
    }),
  ),
});

export const workersOutput = z.array(
  z.object({
    id: z.string(),
    host: z.string(),
    pid: z.number(),
    queue: z.string(),
    startedAt: z.date(),
    lastSeen: z.date(),
    stoppedAt: z.date().nullable(),
    state: z.enum(['alive', 'stalled', 'silent', 'stopped']),
    silentAfterMs: z.number(),
    stalledSince: z.date().nullable(),
    stallReason: z.string().nullable(),
    runnerDeaths: z.number(),
  }),
);

export const stuckJobsOutput = z.array(
  z.object({
    id: z.number(),
    taskName: z.string(),
    queue: z.string(),
    status: z.string(),
    workerId: z.string().nullable(),
    startedAt: z.date(),
    heartbeatAt: z.date().nullable(),
    reason: z.object({ code: z.enum(STUCK_REASONS), seconds: z.number() }),
  }),
);

export const schedulesOutput = z.array(
  z.object({
    id: z.string(),
    kind: z.enum(['payroll', 'builtin']),
    label: z.string(),
    companyName: z.string().nullable(),
    cron: z.string(),
    cronFrom: z.string().nullable(),
    timeZone: z.string(),
    job: z.string(),
    next: z.array(z.date()),
    lastRun: z.date().nullable(),
  }),
);

export const runNowPlanOutput = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('payroll'),
    companyName: z.string(),
    month: z.string(),
    employees: z.number(),
    alreadyRun: z.object({ startedAt: z.date(), by: actorOutput }).nullable(),
  }),
  z.object({ kind: z.literal('builtin'), job: z.string() }),
]);

export const runNowResultOutput = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.enum(['enqueued', 'already-enqueued']), jobId: z.number(), month: z.string().nullable() }),
  z.object({ outcome: z.literal('already-run'), month: z.string(), startedAt: z.date(), by: actorOutput }),
]);

export const approvalPlanOutput = z.object({
  month: z.string(),
  reminders: z.number(),
  remindersAt: z.date(),
  approved: z.object({ at: z.date(), by: actorOutput.nullable() }).nullable(),
});

import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { AnyJobDefinition } from '../definition.ts';
import { acquireSlot, LimitWaitAborted, type SlotLease } from '../limits.ts';
import { slotsFor } from '../lanes.ts';
import { runAttempt } from './attempt.ts';
import type { createClaimBatcher } from './batched.ts';
import type { ActiveJob, WorkerContext } from './context.ts';
import type { HandBacks } from './hand-back.ts';
import type { Outcomes } from './outcome.ts';
import type { JobHandler } from './types.ts';
import { jobTracing } from '../tracing.ts';

const wakeupSchema = z.object({ jobId: z.number().int(), seq: z.number().int() });

/**
 * The graphile-worker task of a definition: a wake-up `{ jobId, seq }` in, then 1. the queue's
 * pause and the global concurrency slot, 2. the claim (batched), 3. the attempt (attempt.ts),
 * 4. its outcome (outcome.ts), written while the wake-up's slot already takes the next job.
 */
export function trackedTask(
  ctx: WorkerContext,
  def: AnyJobDefinition,
  handler: JobHandler<unknown>,
  deps: { claim: ReturnType<typeof createClaimBatcher>; handBacks: HandBacks; outcomes: Outcomes },
): Task {
  const { logger, queue, events } = ctx;
  const { handBacks, outcomes } = deps;
  return async (raw, helpers) => {
    const { jobId, seq } = wakeupSchema.parse(raw);
    if (ctx.shutdown.stopping) return handBacks.reissueWakeup(def, jobId, seq);

    // 1. The queue's pause (an account fault), then the global concurrency slot, waited for
    // without holding a connection or an attempt. An interactive job (lanes.ts: its wake-up's
    // priority) may also take the reserved slots.
    let lease: SlotLease | undefined;
    const waitAbort = new AbortController();
    ctx.waiting.add(waitAbort);
    try {
      if (ctx.pause) await ctx.pause.wait(waitAbort.signal);
      if (def.limits?.concurrency) {
        lease = await acquireSlot(ctx.limiter, {
          key: def.limits.concurrency.key,
          max: slotsFor(def.limits.concurrency, helpers.job.priority),
          holder: `${ctx.workerId}:${jobId}:${seq}`,
          ttlMs: def.timeoutMs + 30_000,
          signal: waitAbort.signal,
        });
        events.onLimitWait?.({ limit: def.limits.concurrency.key, kind: 'concurrency', waitedMs: lease.waitedMs });
      }
    } catch (error) {
      if (error instanceof LimitWaitAborted) return handBacks.reissueWakeup(def, jobId, seq);
      throw error;
    } finally {
      ctx.waiting.delete(waitAbort);
    }

    try {
      // 2. Claim: queued/retrying → running, one more attempt, its history row (batched). A
      // second wake-up of a job this process is running is stale. One of a job this process is
      // still claiming waits for that claim: it may fail as stale because this wake-up is the
      // newer one (HR's resend renumbers a waiting job's wake-up) — dropping this one then left
      // the job queued with no wake-up at all (apps/worker/test/one-slip.test.ts).
      for (let inClaim = ctx.claiming.get(jobId); inClaim; inClaim = ctx.claiming.get(jobId)) {
        if (await inClaim) {
          logger.debug({ jobId, seq, task: def.name }, 'wake-up of a job just claimed ignored');
          return;
        }
      }
      if (ctx.active.has(jobId)) {
        logger.debug({ jobId, seq, task: def.name }, 'wake-up of a job already in hand ignored');
        return;
      }
      const claiming = deps.claim({ jobId, seq });
      const settled = claiming
        .then(
          (row) => Boolean(row),
          () => false,
        )
        .finally(() => ctx.claiming.delete(jobId));
      ctx.claiming.set(jobId, settled);
      const claimed = await claiming;
      if (!claimed) {
        logger.debug({ jobId, seq, task: def.name }, 'stale wake-up ignored');
        return;
      }
      let settle!: (v: 'handed_back') => void;
      const handedBack = new Promise<'handed_back'>((resolve) => (settle = resolve));
      const job: ActiveJob = {
        jobId,
        seq,
        attempt: claimed.attempts,
        attemptId: claimed.attempt_id,
        def,
        startedAt: performance.now(),
        estimateMs: def.timeoutMs,
        controller: new AbortController(),
        handedBack: false,
        held: 0,
        settle,
        traceparent: null,
      };
      ctx.active.set(jobId, job);
      // The attempt's span (tracing.ts), when this process traces: the handler runs inside it.
      const span = jobTracing()?.startAttempt({
        task: def.name,
        queue,
        jobId,
        attempt: job.attempt,
        idempotencyKey: claimed.idempotency_key,
        payload: claimed.payload,
        traceparent: claimed.traceparent,
        firstAttempt: claimed.first_attempt_traceparent,
      });
      job.traceparent = span?.traceparent ?? null;
      const inSpan = <T>(fn: () => Promise<T>): Promise<T> => (span ? span.run(fn) : fn());
      const log = logger.child({ jobId, task: def.name, attempt: job.attempt });

      // 3. The attempt.
      const result = await inSpan(() => {
        log.info({ queue, event: 'start' }, 'job started');
        events.onStart?.({ task: def.name, queue, jobId, attempt: job.attempt });
        return runAttempt(ctx, { def, handler, job, claimed, handedBack, log, handBacks });
      });
      const endedAt = span && Date.now();
      ctx.active.delete(jobId);
      if (result === 'handed_back' || job.handedBack) {
        span?.end('handed_back');
        return;
      }
      const durationMs = performance.now() - job.startedAt;
      // 4. Pipelined: the wake-up's slot takes the next job while this outcome is written (the
      // `jobs` row, not the wake-up, is the truth). A crash before the write commits leaves the
      // job `running` with a silent heartbeat, which the sweeper queues again — the same as a
      // crash a moment earlier. stop() waits for every outcome in flight.
      outcomes.track(
        // In the span: its log line carries the trace, its statements are the span's.
        inSpan(() =>
          outcomes.recordOutcome(job, result, durationMs).then(
            (outcome) => {
              span?.end(outcome, result.ok ? undefined : result.error, endedAt);
              const fields = {
                queue,
                event: 'finish',
                outcome,
                durationMs: Math.round(durationMs),
                ...(result.ok ? {} : { errorKind: result.error.kind, errorCode: result.error.code, error: result.error.message }),
              };
              if (outcome === 'done' || outcome === 'superseded') log.info(fields, `job ${outcome}`);
              else log.warn(fields, `job ${outcome}`);
              events.onFinish?.({ task: def.name, queue, jobId, attempt: job.attempt, outcome, durationMs, ...(result.ok ? {} : { error: result.error }) });
            },
            (error) => {
              span?.end('unrecorded', result.ok ? undefined : result.error, endedAt);
              log.error({ err: error }, 'could not record the job outcome; the stuck-job sweeper will queue it again');
            },
          ),
        ),
      );
    } finally {
      // Idempotent (released only by its holder), retried across a database fault like any
      // write: a slot left held blocks others until its TTL (the job's timeout + 30 s).
      if (lease)
        await ctx
          .withRetry('release a limiter slot', () => lease.release())
          .catch((error) => logger.error({ err: error }, 'slot release failed; it expires at its TTL'));
    }
  };
}

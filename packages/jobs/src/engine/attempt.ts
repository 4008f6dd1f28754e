import type { AnyJobDefinition } from '../definition.ts';
import { classifyError, TransientError, type ClassifiedError } from '../errors.ts';
import { takeRateTurn } from '../limits.ts';
import type { Logger } from '../logger.ts';
import type { ActiveJob, AttemptResult, WorkerContext } from './context.ts';
import type { HandBacks } from './hand-back.ts';
import type { ClaimedRow } from './sql/claim.ts';
import type { JobHandler } from './types.ts';

/**
 * Runs one claimed job's handler: its payload parsed by the definition's schema, its rate limit
 * taken (before the handler, or when the handler asks), raced against the job's timeout (which
 * aborts the handler's signal) and against a hand-back (shutdown). Resolves with how the
 * handler's run ended, or 'handed_back'; never rejects.
 */
export async function runAttempt(
  ctx: WorkerContext,
  a: {
    def: AnyJobDefinition;
    handler: JobHandler<unknown>;
    job: ActiveJob;
    claimed: ClaimedRow;
    handedBack: Promise<'handed_back'>;
    log: Logger;
    handBacks: HandBacks;
  },
): Promise<AttemptResult | 'handed_back'> {
  const { def, handler, job, claimed, log } = a;
  const { controller } = job;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<{ ok: false; error: ClassifiedError }>((resolve) => {
    timer = setTimeout(() => {
      const error = new TransientError('timeout', `${def.name} exceeded its timeout of ${def.timeoutMs} ms`);
      controller.abort(error);
      resolve({ ok: false, error: classifyError(error) });
    }, def.timeoutMs);
  });
  const run = (async (): Promise<AttemptResult> => {
    try {
      const payload = def.schema.parse(claimed.payload); // queued jobs may carry an older shape
      job.estimateMs = def.estimateMs?.(payload) ?? def.timeoutMs;
      if (ctx.shutdown.stopping && performance.now() + job.estimateMs > ctx.shutdown.deadline) {
        a.handBacks
          .handBack(job, 'cannot finish within the shutdown grace period')
          .catch((error) => log.error({ err: error }, 'hand back failed; the sweeper will queue the job again'));
      }
      const rate = def.limits?.rate;
      // The turn taken, and until when it is on time: a later call takes a new turn only if the
      // handler's work since the first made this one late (see JobContext.rateLimit).
      let onTimeUntil: number | undefined;
      const rateTurnOnTime = () => onTimeUntil !== undefined && performance.now() <= onTimeUntil;
      const rateLimit = async () => {
        if (!rate || rateTurnOnTime()) return;
        const turn = await takeRateTurn(ctx.limiter, { ...rate, signal: controller.signal });
        onTimeUntil = turn.onTimeUntil;
        ctx.events.onLimitWait?.({ limit: rate.key, kind: 'rate', waitedMs: turn.waitedMs });
      };
      if (rate && rate.at !== 'handler') await rateLimit();
      await handler(payload, {
        rateLimit,
        rateTurnOnTime,
        jobId: job.jobId,
        attempt: job.attempt,
        maxAttempts: claimed.max_attempts,
        idempotencyKey: claimed.idempotency_key,
        workerId: ctx.workerId,
        signal: controller.signal,
        log,
        timeLeftMs: () => Math.min(job.startedAt + def.timeoutMs, ctx.shutdown.deadline) - performance.now(),
        hold: () => {
          job.held++;
          let released = false;
          return () => {
            if (released) return;
            released = true;
            job.held--;
          };
        },
      });
      return { ok: true };
    } catch (error) {
      const cause = controller.signal.aborted && controller.signal.reason instanceof TransientError ? controller.signal.reason : error;
      return { ok: false, error: classifyError(cause), thrown: cause };
    }
  })();
  try {
    return await Promise.race([run, timedOut, a.handedBack]);
  } finally {
    job.held = 0;
    clearTimeout(timer);
  }
}

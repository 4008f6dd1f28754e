import { inTransaction } from '../db.ts';
import type { AnyJobDefinition } from '../definition.ts';
import { addWakeups } from '../wakeups.ts';
import type { ActiveJob, WorkerContext } from './context.ts';
import { handBackJob, nextWakeupSeq } from './sql/hand-back.ts';

/** Giving work back to the queue without counting an attempt: a job in hand, or a wake-up not yet claimed. */
export interface HandBacks {
  /**
   * Hands a claimed job back to the queue: not a failed attempt, another worker takes it now. A
   * held job (a request on the wire) is kept unless `force` (the grace period is over, a second
   * signal).
   */
  handBack(job: ActiveJob, why: string, force?: boolean): Promise<void>;
  /** The hand-back's rows: running → queued, its history row and a new wake-up; safe to run twice. */
  handBackRow(job: ActiveJob, message: string, errorCode?: string | null): Promise<void>;
  /** A wake-up taken but not yet claimed (waiting on a limit) when shutdown came: re-issue it. */
  reissueWakeup(def: AnyJobDefinition, jobId: number, seq: number): Promise<void>;
  /** Aborts every wait and hands back every job in hand, held or not. */
  handBackAll(why: string): Promise<void>;
}

export function createHandBacks(ctx: WorkerContext): HandBacks {
  const { pool, logger, events, queue } = ctx;

  function handBackRow(job: ActiveJob, message: string, errorCode: string | null = null): Promise<void> {
    return ctx.withRetry('hand a job back', () =>
      inTransaction(pool, undefined, async (client) => {
        const seq = await handBackJob(client, {
          jobId: job.jobId,
          attempt: job.attempt,
          attemptId: job.attemptId,
          durationMs: performance.now() - job.startedAt,
          message,
          errorCode,
        });
        if (seq !== undefined) await addWakeups(client, job.def.name, [{ jobId: job.jobId, seq, runAt: null }]);
      }),
    );
  }

  async function handBack(job: ActiveJob, why: string, force = false): Promise<void> {
    if (job.handedBack || (job.held > 0 && !force)) return;
    job.handedBack = true;
    job.controller.abort(new Error(`handed back: ${why}`));
    job.settle('handed_back');
    await handBackRow(job, `handed back: ${why}`);
    logger.info({ jobId: job.jobId, task: job.def.name, attempt: job.attempt, outcome: 'handed_back', why }, 'job handed back');
    events.onFinish?.({
      task: job.def.name,
      queue,
      jobId: job.jobId,
      attempt: job.attempt,
      outcome: 'handed_back',
      durationMs: performance.now() - job.startedAt,
    });
  }

  async function reissueWakeup(def: AnyJobDefinition, jobId: number, seq: number): Promise<void> {
    await ctx.withRetry('re-issue a wake-up', () =>
      inTransaction(pool, undefined, async (client) => {
        const next = await nextWakeupSeq(client, jobId, seq);
        if (next !== undefined) await addWakeups(client, def.name, [{ jobId, seq: next, runAt: null }]);
      }),
    );
  }

  async function handBackAll(why: string): Promise<void> {
    for (const w of ctx.waiting) w.abort();
    await Promise.all(
      [...ctx.active.values()].map((job) => handBack(job, why, true).catch((error) => logger.error({ err: error, jobId: job.jobId }, 'hand back failed'))),
    );
  }

  return { handBack, handBackRow, reissueWakeup, handBackAll };
}

import { canRetry, retryDelayMs, retryPolicy } from '../backoff.ts';
import { isConnectionError } from '../connection-retry.ts';
import { inTransaction } from '../db.ts';
import type { AnyJobDefinition } from '../definition.ts';
import type { ClassifiedError } from '../errors.ts';
import { recurringFailingSeconds } from '../stats.ts';
import { addWakeups } from '../wakeups.ts';
import type { ActiveJob, AttemptResult, WorkerContext } from './context.ts';
import type { HandBacks } from './hand-back.ts';
import { OUTCOME_STATUS, writeFailure, type DoneItem } from './sql/finish.ts';
import type { AttemptOutcome } from './types.ts';

/** What an attempt's end means for its job; decided once, so a write run again writes the same. */
type Decision =
  | { kind: 'done' }
  /** The database went away under the handler: not the job's fault, so not an attempt used. */
  | { kind: 'handed_back'; error: ClassifiedError }
  /** The account's fault (issue 16): the queue is paused and the job goes back to queued, no attempt used. */
  | { kind: 'paused'; error: ClassifiedError }
  /** Waiting for evidence that is on its way (DeferError): runs again after its delay, no attempt used. */
  | { kind: 'deferred'; error: ClassifiedError; delayMs: number }
  | { kind: 'retrying'; error: ClassifiedError; delayMs: number }
  | { kind: 'failed'; error: ClassifiedError }
  /** Another job did its work (R13, SupersededError): final status `superseded`, never retried. */
  | { kind: 'superseded'; error: ClassifiedError }
  /** A recurring job whose next run does its work: ends done with its error kept (supersededByNextRun). */
  | { kind: 'next_run'; error: ClassifiedError };

const OUTCOMES: Record<Decision['kind'], AttemptOutcome> = {
  done: 'done',
  handed_back: 'handed_back',
  paused: 'handed_back',
  deferred: 'retrying',
  retrying: 'retrying',
  superseded: 'superseded',
  next_run: 'done',
  failed: 'failed',
};

/** The attempt row's outcome of a decision written by writeFailure. */
const ATTEMPT_OUTCOME = {
  paused: 'handed_back',
  deferred: 'retrying',
  retrying: 'retrying',
  superseded: 'superseded',
  next_run: 'failed',
  failed: 'failed',
} as const satisfies Record<keyof typeof OUTCOME_STATUS, AttemptOutcome>;

export interface Outcomes {
  /**
   * Writes an attempt's outcome, on a fresh connection after a database fault (until
   * dbRetryDeadlineMs) and again after a deadlock: the work is done and must not be left
   * `running` until the stuck-job sweep. A write that never succeeds leaves the job `running`
   * untouched by any heartbeat: the sweeper queues it again. An account fault pauses the queue
   * for every worker before the job goes back.
   */
  recordOutcome(job: ActiveJob, result: AttemptResult, durationMs: number): Promise<AttemptOutcome>;
  /** Keeps an outcome write in flight known until it settles (stop() waits for ctx.recording). */
  track(p: Promise<void>): void;
}

export function createOutcomes(ctx: WorkerContext, deps: { handBacks: HandBacks; markDone: (item: DoneItem) => Promise<void> }): Outcomes {
  const { pool, logger } = ctx;

  async function decide(job: ActiveJob, result: AttemptResult): Promise<Decision> {
    if (result.ok) return { kind: 'done' };
    const { error } = result;
    // A lost database connection (a SQLSTATE or node-postgres's own message), or a bare socket
    // error while the database does not answer: the attempt is handed back, not counted.
    if (error.code === 'database_unavailable' || (isConnectionError(result.thrown) && !(await ctx.db.probe())))
      return { kind: 'handed_back', error: { ...error, code: 'database_unavailable' } };
    if (error.action === 'pause') return { kind: 'paused', error };
    if (error.action === 'defer') return { kind: 'deferred', error, delayMs: Math.max(0, Math.round(error.retryAfterMs ?? 0)) };
    if (error.supersededBy !== undefined) return { kind: 'superseded', error };
    const policy = retryPolicy(job.def.retry);
    if (error.kind === 'transient' && canRetry(job.attempt, policy)) {
      return { kind: 'retrying', error, delayMs: retryDelayMs({ attempt: job.attempt, policy, retryAfterMs: error.retryAfterMs, random: ctx.random }) };
    }
    if (error.kind === 'transient' && job.def.supersededByNextRun) return { kind: 'next_run', error };
    return { kind: 'failed', error };
  }

  /** Writes a decided outcome: guarded by the job's attempt, so a second run changes nothing. */
  async function writeOutcome(job: ActiveJob, decision: Decision, durationMs: number): Promise<void> {
    if (decision.kind === 'done') return deps.markDone({ jobId: job.jobId, attempt: job.attempt, attemptId: job.attemptId, durationMs });
    if (decision.kind === 'handed_back')
      return deps.handBacks.handBackRow(job, `handed back: the database connection was lost (${decision.error.message})`, 'database_unavailable');
    const { error } = decision;
    const delayMs = decision.kind === 'paused' ? 0 : decision.kind === 'deferred' || decision.kind === 'retrying' ? decision.delayMs : null;
    await inTransaction(pool, undefined, async (client) => {
      const row = await writeFailure(client, {
        jobId: job.jobId,
        attempt: job.attempt,
        attemptId: job.attemptId,
        status: OUTCOME_STATUS[decision.kind],
        attemptOutcome: ATTEMPT_OUTCOME[decision.kind],
        durationMs,
        message: decision.kind === 'next_run' ? `superseded by the next run: ${error.message}` : error.message,
        errorKind: error.kind,
        errorCode: error.code,
        errorStack: error.stack ?? null,
        delayMs,
        // A pause or a deferral is not the job's attempt: the count goes back.
        free: decision.kind === 'paused' || decision.kind === 'deferred',
        supersededBy: decision.kind === 'superseded' ? (error.supersededBy ?? null) : null,
        attemptTraceparent: job.traceparent,
      });
      if (delayMs !== null && row) await addWakeups(client, job.def.name, [{ jobId: job.jobId, seq: row.wakeup_seq, runAt: row.run_at }]);
    });
  }

  /** A superseded recurring job: an error in the log when its task has not succeeded for longer than its alert threshold. */
  async function alertIfStillFailing(def: AnyJobDefinition): Promise<void> {
    const alertAfterMs = def.supersededByNextRun?.alertAfterMs;
    if (alertAfterMs === undefined) return;
    try {
      const failingSeconds = (await recurringFailingSeconds(pool, [def.name], ctx.links))[def.name] ?? 0;
      if (failingSeconds * 1000 > alertAfterMs) {
        logger.error(
          { task: def.name, failingSeconds: Math.round(failingSeconds), alertAfterSeconds: alertAfterMs / 1000 },
          `recurring job ${def.name} has not succeeded for ${Math.round(failingSeconds / 60)} min`,
        );
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not check how long a recurring job has been failing');
    }
  }

  async function recordOutcome(job: ActiveJob, result: AttemptResult, durationMs: number): Promise<AttemptOutcome> {
    ctx.recordingJobs.add(job.jobId);
    let decision: Decision;
    try {
      decision = await decide(job, result);
      const decided = decision;
      if (decided.kind === 'paused') await ctx.pause?.pause({ reason: decided.error.message, errorCode: decided.error.code });
      await ctx.withRetry('record a job outcome', () => writeOutcome(job, decided, durationMs), { alsoConflicts: true });
    } finally {
      ctx.recordingJobs.delete(job.jobId);
    }
    if (decision.kind === 'next_run') void alertIfStillFailing(job.def);
    return OUTCOMES[decision.kind];
  }

  function track(p: Promise<void>): void {
    ctx.recording.add(p);
    void p.finally(() => ctx.recording.delete(p));
  }

  return { recordOutcome, track };
}

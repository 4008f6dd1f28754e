import type { WorkerContext } from './context.ts';
import type { DbHealth } from './db-health.ts';
import type { HandBacks } from './hand-back.ts';
import type { Heartbeat } from './heartbeat.ts';
import type { LoopMonitor } from './loop-monitor.ts';
import type { RunnerSupervisor } from './runner-supervisor.ts';
import { markWorkerStopped } from './sql/workers.ts';

/**
 * Graceful shutdown (R10): stop fetching, let jobs finish, hand back at once those that cannot
 * finish before the grace period ends (a held job — its request on the wire — excepted), hand
 * back the rest at its end, wait for the outcomes being written, mark the worker stopped. A
 * second call hands everything back at once. Returns stop(reason).
 */
export function createStop(
  ctx: WorkerContext,
  o: {
    shutdownGraceMs: number;
    supervisor: RunnerSupervisor;
    heartbeat: Heartbeat;
    handBacks: HandBacks;
    loop: LoopMonitor;
    db: DbHealth;
    onStopped: () => void;
  },
): (reason?: string) => Promise<void> {
  const { logger, active } = ctx;
  const { handBacks } = o;
  let stopPromise: Promise<void> | undefined;

  return function stop(reason = 'stop requested') {
    if (stopPromise) {
      // Second signal: hand everything back now and let the first stop() finish fast.
      logger.warn({ reason }, 'second stop request: handing back every job now');
      void handBacks.handBackAll('forced shutdown');
      return stopPromise;
    }
    ctx.shutdown.stopping = true;
    const graceStarted = performance.now();
    // Leave a margin to write the hand-backs and exit before SIGKILL.
    const deadline = graceStarted + Math.max(0, o.shutdownGraceMs - Math.min(2000, o.shutdownGraceMs * 0.1));
    ctx.shutdown.deadline = deadline;
    logger.info({ reason, active: active.size, graceMs: o.shutdownGraceMs }, 'graceful shutdown started');
    stopPromise = (async () => {
      for (const w of ctx.waiting) w.abort();
      // A held job (its request on the wire) is not handed back: it finishes within the grace.
      const late = [...active.values()].filter((job) => job.held === 0 && job.startedAt + job.estimateMs > deadline);
      const handBacksNow = late.map((job) =>
        handBacks
          .handBack(job, 'cannot finish within the shutdown grace period')
          .catch((error) => logger.error({ err: error, jobId: job.jobId }, 'hand back failed')),
      );
      const graceTimer = setTimeout(() => void handBacks.handBackAll('shutdown grace period over'), Math.max(0, deadline - performance.now()));
      // Writes still retrying across a database fault give up a little after the grace period's end.
      const retryTimer = setTimeout(() => ctx.graceOver.abort(), Math.max(0, deadline - performance.now()) + 1000);
      try {
        await Promise.all(handBacksNow);
        await o.supervisor.stop(reason);
        // A runner that died left its tasks running: wait for the jobs still in hand.
        while (active.size > 0 && performance.now() < deadline + 1000) await new Promise((r) => setTimeout(r, 50));
      } finally {
        while (ctx.recording.size > 0) await Promise.all([...ctx.recording]);
        clearTimeout(graceTimer);
        clearTimeout(retryTimer);
        const lastBeat = o.heartbeat.stop();
        ctx.pause?.stop();
        o.loop.stop();
        o.db.close();
        await lastBeat;
        await ctx.withRetry('mark the worker stopped', () => markWorkerStopped(ctx.pool, ctx.workerId), { deadlineMs: 5000 }).catch(() => {});
        logger.info({ ms: Math.round(performance.now() - graceStarted) }, 'worker stopped');
        o.onStopped();
      }
    })();
    return stopPromise;
  };
}

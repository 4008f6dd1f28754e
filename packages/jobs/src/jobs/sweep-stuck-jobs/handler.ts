import type { Pool } from '../../db.ts';
import type { HandlerOf } from '../../definition.ts';
import { MISSING_WAKEUPS_EVERY_MS, recoverStuckJobs } from '../../sweeper.ts';
import type { sweepStuckJobsJob } from './definition.ts';

export interface SweepHandlerDeps {
  pool: Pool;
  /** STUCK_RUNNING_MS: a job running longer than this is put back. */
  stuckRunningMs: number;
  /** STALE_HEARTBEAT_MS: a worker silent this long is gone. */
  staleHeartbeatMs: number;
}

/**
 * Every sweep puts back stuck, orphaned and stranded jobs; the first sweep this process runs and
 * then one an hour also look for waiting jobs with no wake-up at all (sweeper.ts:
 * SweepOptions.missingWakeups), the one check that reads the month's whole queue.
 */
export const sweepStuckJobsHandler = (deps: SweepHandlerDeps): HandlerOf<typeof sweepStuckJobsJob> => {
  let missingCheckedAt = -Infinity;
  return async (_payload, ctx) => {
    const missingWakeups = performance.now() - missingCheckedAt >= MISSING_WAKEUPS_EVERY_MS;
    const { recovered, requeued, releasedWakeups } = await recoverStuckJobs(deps.pool, {
      runningLongerThanMs: deps.stuckRunningMs,
      heartbeatOlderThanMs: deps.staleHeartbeatMs,
      missingWakeups,
    });
    if (missingWakeups) missingCheckedAt = performance.now();
    if (recovered.length) ctx.log.warn({ recovered }, `recovered ${recovered.length} stuck job(s)`);
    if (requeued.length) ctx.log.warn({ requeued }, `queued ${requeued.length} stranded job(s) again: due, but no worker could take them`);
    if (releasedWakeups) ctx.log.warn({ releasedWakeups }, `released ${releasedWakeups} wake-up(s) held by workers that stopped touching them`);
  };
};

import type { Pool } from '@beton/db';
import type { HandlerOf } from '../../definition.ts';
import { recoverStuckJobs } from '../../sweeper.ts';
import type { sweepStuckJobsJob } from './definition.ts';

export interface SweepHandlerDeps {
  pool: Pool;
  /** STUCK_RUNNING_MS: a job running longer than this is put back. */
  stuckRunningMs: number;
  /** STALE_HEARTBEAT_MS: a worker silent this long is gone. */
  staleHeartbeatMs: number;
}

export const sweepStuckJobsHandler =
  (deps: SweepHandlerDeps): HandlerOf<typeof sweepStuckJobsJob> =>
  async (_payload, ctx) => {
    const { recovered, requeued, releasedWakeups } = await recoverStuckJobs(deps.pool, {
      runningLongerThanMs: deps.stuckRunningMs,
      heartbeatOlderThanMs: deps.staleHeartbeatMs,
    });
    if (recovered.length) ctx.log.warn({ recovered }, `recovered ${recovered.length} stuck job(s)`);
    if (requeued.length) ctx.log.warn({ requeued }, `queued ${requeued.length} stranded job(s) again: due, but no worker could take them`);
    if (releasedWakeups) ctx.log.warn({ releasedWakeups }, `released ${releasedWakeups} wake-up(s) held by workers that stopped touching them`);
  };

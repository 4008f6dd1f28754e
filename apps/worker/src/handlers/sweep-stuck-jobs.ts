import { recoverStuckJobs } from '@beton/jobs';
import type { HandlerFactory } from './deps.ts';

export const sweepStuckJobsHandler: HandlerFactory<'sweep-stuck-jobs'> = (deps) => async (_payload, ctx) => {
  const { recovered, requeued, releasedWakeups } = await recoverStuckJobs(deps.pool, {
    runningLongerThanMs: deps.config.stuckRunningMs,
    heartbeatOlderThanMs: deps.config.staleHeartbeatMs,
  });
  if (recovered.length) ctx.log.warn({ recovered }, `recovered ${recovered.length} stuck job(s)`);
  if (requeued.length) ctx.log.warn({ requeued }, `queued ${requeued.length} stranded job(s) again: due, but no worker could take them`);
  if (releasedWakeups) ctx.log.warn({ releasedWakeups }, `released ${releasedWakeups} wake-up(s) held by workers that stopped touching them`);
};

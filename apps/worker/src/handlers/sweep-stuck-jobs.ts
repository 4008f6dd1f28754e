import { recoverStuckJobs } from '@beton/jobs';
import type { HandlerFactory } from './deps.ts';

export const sweepStuckJobsHandler: HandlerFactory = (deps) => async (_payload, ctx) => {
  const { recovered } = await recoverStuckJobs(deps.pool, {
    runningLongerThanMs: deps.config.stuckRunningMs,
    heartbeatOlderThanMs: deps.config.staleHeartbeatMs,
  });
  if (recovered.length) ctx.log.warn({ recovered }, `recovered ${recovered.length} stuck job(s)`);
};

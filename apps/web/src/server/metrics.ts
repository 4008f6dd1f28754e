import { jobDefinitions } from '@beton/dashboard/job-registry';
import { queueDepth } from '@beton/jobs/stats';
import { createBetonMetrics } from '@beton/dashboard/metrics';
import { pgPoolStats, type JobMetrics } from '@beton/jobs/metrics';
import { db } from './db.ts';

let cached: JobMetrics | undefined;

/** One registry per web process: queue depth from the jobs table, the web pool's use. */
export function metrics(): JobMetrics {
  cached ??= createBetonMetrics({
    defaultLabels: { service: 'web' },
    collectQueueStats: () => queueDepth(db(), jobDefinitions),
    collectDbPool: () => [pgPoolStats('web', db())],
  });
  return cached;
}

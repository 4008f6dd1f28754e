/** The import-employees job's handler: a few lines over ../../import/run.ts. */
import type { Pool } from '@beton/db';
import type { HandlerOf, JobEnqueuer } from '@beton/jobs/client';
import type { ImportLimits } from '../../import/policy.ts';
import { applyImport, validateImport } from '../../import/run.ts';
import type { importEmployeesJob } from './definition.ts';

/** Time a part works before it hands the rest to the next part (a batch may run past it; the job's timeout is 25 s). */
const PART_BUDGET_MS = 12_000;

export interface ImportHandlerDeps {
  pool: Pool;
  /** Queues the next part of a file that did not fit in this one's time. */
  jobs: Pick<JobEnqueuer<readonly [typeof importEmployeesJob]>, 'enqueue'>;
  /** The worker's IMPORT_MAX_INFLATED_BYTES and IMPORT_MAX_ROWS. Default: DEFAULT_IMPORT_LIMITS. */
  limits?: ImportLimits;
}

export const importEmployeesHandler =
  (deps: ImportHandlerDeps): HandlerOf<typeof importEmployeesJob> =>
  async (payload, ctx) => {
    const started = performance.now();
    const options = { signal: ctx.signal, budgetMs: PART_BUDGET_MS, limits: deps.limits };
    const result =
      payload.phase === 'validate' ? await validateImport(deps.pool, payload.importId, options) : await applyImport(deps.pool, payload.importId, options);
    ctx.log.info({ ...payload, ...result, ms: Math.round(performance.now() - started) }, `employee import ${payload.phase}: ${result.status}`);
    if (!result.done) await deps.jobs.enqueue('import-employees', { ...payload, part: (payload.part ?? 0) + 1 });
  };

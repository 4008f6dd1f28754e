import type { HandlerOf } from '@beton/jobs/client';
import { renderSlipAndQueueEmail } from '../../slip.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { renderSlipJob } from './definition.ts';

export const renderSlipHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof renderSlipJob> =>
  async (payload, ctx) => {
    const renderPool = deps.renderPool;
    if (!renderPool) throw new Error('render-slip runs only in a pdf-render worker (no thread pool here)');
    const result = await renderSlipAndQueueEmail(
      {
        pool: deps.pool,
        jobs: deps.jobs,
        render: (data, options) => renderPool.render(data, { signal: ctx.signal, key: ctx.idempotencyKey, password: options.password }),
      },
      payload,
      ctx.idempotencyKey,
      { jobId: ctx.jobId },
    );
    ctx.log.debug(result, 'slip rendered');
  };

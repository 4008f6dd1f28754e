import { jobLinks } from '@beton/db/job-links';
import { defineJob } from '@beton/jobs/client';
import { slipKey, slipPayload } from '../slip-payload.ts';

/** Renders one employee's salary-slip PDF (CPU-bound, thread pool), then enqueues its email. */
export const renderSlipJob = defineJob({
  name: 'render-slip',
  queue: 'pdf-render',
  schema: slipPayload,
  timeoutMs: 30_000,
  idempotencyKey: slipKey,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
});

import { defineJob } from '../definition.ts';
import { slipKey, slipPayload } from './shared.ts';

/** Renders one employee's salary-slip PDF (CPU-bound, thread pool), then enqueues its email. */
export const renderSlip = defineJob({
  name: 'render-slip',
  queue: 'pdf-render',
  schema: slipPayload,
  timeoutMs: 30_000,
  idempotencyKey: slipKey,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
});

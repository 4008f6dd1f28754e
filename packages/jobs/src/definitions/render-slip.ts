import { z } from 'zod';
import { defineJob } from '../definition.ts';
import { month, slipKey } from './shared.ts';

/** Renders one employee's salary-slip PDF (CPU-bound, thread pool), then enqueues its email. */
export const renderSlip = defineJob({
  name: 'render-slip',
  queue: 'pdf-render',
  schema: z.object({
    companyId: z.string().uuid(),
    employeeId: z.number().int().positive(),
    month,
    payrollRunId: z.string().uuid().optional(),
    /** n-th explicit resend by HR; absent for the monthly run. */
    resend: z.number().int().positive().optional(),
  }),
  timeoutMs: 30_000,
  idempotencyKey: slipKey,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
});

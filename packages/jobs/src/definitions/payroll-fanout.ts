import { z } from 'zod';
import { defineJob } from '../definition.ts';
import { month } from './shared.ts';

/** The monthly run of one company: lock, the unique payroll_runs row, one render job per employee. */
export const payrollFanout = defineJob({
  name: 'payroll-fanout',
  queue: 'maintenance',
  schema: z.object({ companyId: z.string().uuid(), month }),
  timeoutMs: 25_000,
  idempotencyKey: (p) => `payroll:${p.month}:${p.companyId}`,
  links: (p) => ({ companyId: p.companyId }),
});

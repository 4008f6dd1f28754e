import { jobLinks } from '@beton/db/job-links';
import { monthSchema } from '@beton/db/month';
import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

/** The monthly run of one company: lock, the unique payroll_runs row, one render job per employee. */
export const payrollFanoutJob = defineJob({
  name: 'payroll-fanout',
  queue: 'maintenance',
  schema: z.object({ companyId: z.string().uuid(), month: monthSchema }),
  timeoutMs: 25_000,
  idempotencyKey: (p) => `payroll:${p.month}:${p.companyId}`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId }),
});

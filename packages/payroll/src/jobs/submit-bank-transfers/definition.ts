import { jobLinks } from '@beton/db/job-links';
import { monthSchema } from '@beton/db/month';
import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

/**
 * One company's salary transfers of one month, submitted to the bank (enqueued by the monthly
 * run's fan-out, so the fan-out itself stays an enqueue). The bank dedupes by each transfer's
 * reference, so a retried attempt cannot pay twice.
 */
export const submitBankTransfersJob = defineJob({
  name: 'submit-bank-transfers',
  queue: 'maintenance',
  schema: z.object({ companyId: z.string().uuid(), month: monthSchema, payrollRunId: z.string().uuid().optional() }),
  timeoutMs: 25_000,
  retry: { maxAttempts: 8 },
  idempotencyKey: (p) => `bank-transfers:${p.month}:${p.companyId}`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId, payrollRunId: p.payrollRunId }),
});

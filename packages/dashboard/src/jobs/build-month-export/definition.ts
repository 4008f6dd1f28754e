import { jobLinks } from '@beton/db/job-links';
import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

/**
 * Builds one of HR's month exports (issue 22) — the slips as one ZIP, or the payroll register
 * as CSV or XLSX — streaming it into month_export_parts with its progress on the row. The work
 * is in ../../exports (build.ts). A slips ZIP's attempt starts its volume over; a payroll register
 * is built in checkpointed parts (a part that used its time budget continues in the next run of
 * the job, no attempt used), so a retry never appends to a half-written file.
 */
export const buildMonthExportJob = defineJob({
  name: 'build-month-export',
  queue: 'maintenance',
  schema: z.object({ exportId: z.string().uuid(), companyId: z.string().uuid() }),
  // Like every job, shorter than the visibility timeout and the shutdown grace: a slips ZIP is
  // split into volumes of SLIPS_PER_ZIP (5,000 slips, ~85 MB, a few seconds) so each fits.
  timeoutMs: 25_000,
  retry: { maxAttempts: 3 },
  idempotencyKey: (p) => `month-export:${p.exportId}`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId }),
});

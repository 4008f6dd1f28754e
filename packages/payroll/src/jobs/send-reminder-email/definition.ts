import { jobLinks } from '@beton/db/job-links';
import { monthSchema } from '@beton/db/month';
import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';
import { EMAIL_PROVIDER_LIMITS, EMAIL_RETRY, emailProviderLimits, type EmailJobSettings } from '../email-policy.ts';

/** The delayed reminder (R1): enqueued when HR approves payroll, runs 30 minutes later. */
export const sendReminderEmailJob = defineJob({
  name: 'send-reminder-email',
  queue: 'send-email',
  // payrollRunId: the run the reminder belongs to (its card counts them); absent in reminders queued before it existed.
  schema: z.object({ companyId: z.string().uuid(), employeeId: z.number().int().positive(), month: monthSchema, payrollRunId: z.string().uuid().optional() }),
  timeoutMs: 30_000,
  idempotencyKey: (p) => `reminder:${p.month}:emp-${p.employeeId}`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
  limits: EMAIL_PROVIDER_LIMITS,
  configure: (s: EmailJobSettings) => ({ limits: emailProviderLimits(s.emailLimits) }),
  retry: EMAIL_RETRY,
});

import { jobLinks } from '@beton/db/job-links';
import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';
import { EMAIL_PROVIDER_LIMITS, EMAIL_RETRY, emailProviderLimits, type EmailJobSettings } from '../email-policy.ts';

/** One status email to a company's HR per bank poll that found credited salaries. */
export const sendBankStatusEmailJob = defineJob({
  name: 'send-bank-status-email',
  queue: 'send-email',
  schema: z.object({ companyId: z.string().uuid(), pollWindow: z.string(), credited: z.number().int().nonnegative() }),
  timeoutMs: 30_000,
  idempotencyKey: (p) => `bank-status:${p.companyId}:${p.pollWindow}`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId }),
  limits: EMAIL_PROVIDER_LIMITS,
  configure: (s: EmailJobSettings) => ({ limits: emailProviderLimits(s.emailLimits) }),
  retry: EMAIL_RETRY,
});

import { jobLinks } from '@beton/db/job-links';
import { defineJob } from '@beton/jobs/client';
import { EMAIL_PROVIDER_LIMITS, EMAIL_RETRY, emailProviderLimits, type EmailJobSettings } from '../email-policy.ts';
import { slipKey, slipPayload } from '../slip-payload.ts';

/** Emails a rendered slip through the provider, exactly once per slip key (R7). */
export const sendSlipEmailJob = defineJob({
  name: 'send-slip-email',
  queue: 'send-email',
  schema: slipPayload,
  timeoutMs: 30_000,
  idempotencyKey: (p) => `${slipKey(p)}:email`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
  limits: EMAIL_PROVIDER_LIMITS,
  configure: (s: EmailJobSettings) => ({ limits: emailProviderLimits(s.emailLimits) }),
  retry: EMAIL_RETRY,
});

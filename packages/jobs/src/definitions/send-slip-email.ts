import { defineJob } from '../definition.ts';
import { emailProviderLimits, EMAIL_PROVIDER_LIMITS, type BetonJobSettings, EMAIL_RETRY, slipKey, slipPayload } from './shared.ts';

/** Emails a rendered slip through the provider, exactly once per slip key (R7). */
export const sendSlipEmail = defineJob({
  name: 'send-slip-email',
  queue: 'send-email',
  schema: slipPayload,
  timeoutMs: 30_000,
  idempotencyKey: (p) => `${slipKey(p)}:email`,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
  limits: EMAIL_PROVIDER_LIMITS,
  configure: (s: BetonJobSettings) => ({ limits: emailProviderLimits(s.emailLimits) }),
  retry: EMAIL_RETRY,
});

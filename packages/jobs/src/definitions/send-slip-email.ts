import { z } from 'zod';
import { defineJob } from '../definition.ts';
import { EMAIL_PROVIDER_LIMITS, month, slipKey } from './shared.ts';

/** Emails a rendered slip through the provider, exactly once per slip key (R7). */
export const sendSlipEmail = defineJob({
  name: 'send-slip-email',
  queue: 'send-email',
  schema: z.object({
    companyId: z.string().uuid(),
    employeeId: z.number().int().positive(),
    month,
    payrollRunId: z.string().uuid().optional(),
    resend: z.number().int().positive().optional(),
  }),
  timeoutMs: 30_000,
  idempotencyKey: (p) => `${slipKey(p)}:email`,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId, payrollRunId: p.payrollRunId }),
  limits: EMAIL_PROVIDER_LIMITS,
});

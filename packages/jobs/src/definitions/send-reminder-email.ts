import { z } from 'zod';
import { defineJob } from '../definition.ts';
import { EMAIL_PROVIDER_LIMITS, EMAIL_RETRY, month } from './shared.ts';

/** The delayed reminder (R1): enqueued when HR approves payroll, runs 30 minutes later. */
export const sendReminderEmail = defineJob({
  name: 'send-reminder-email',
  queue: 'send-email',
  schema: z.object({ companyId: z.string().uuid(), employeeId: z.number().int().positive(), month }),
  timeoutMs: 30_000,
  idempotencyKey: (p) => `reminder:${p.month}:emp-${p.employeeId}`,
  links: (p) => ({ companyId: p.companyId, employeeId: p.employeeId }),
  limits: EMAIL_PROVIDER_LIMITS,
  retry: EMAIL_RETRY,
});

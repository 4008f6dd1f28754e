import { z } from 'zod';

/** 'YYYY-MM', the month a payroll pays. */
export const month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'month must look like 2026-11');

/**
 * The email rate limit's timing slack (see waitForRate): 10 ms late at most, 10 ms of arrival
 * jitter, one send per 25.5 ms at 40/s (39.2/s). Measured on one 2-core machine with the
 * renders niced (bench, 5,000 sends, each request's bytes leaving as its turn comes — see the
 * mailer's request gate): arrival jitter median 0.2 ms, p99 6–7 ms, p99.9 18–22 ms; the
 * closest 41 arrivals 981–1,000 ms apart over six runs, and never 41 in one of the provider's
 * 1-second windows (0 × 429). Less slack costs more than it gains (14 ms: 154 late starts re-placed instead of
 * ~50–60, 38.3/s delivered instead of 38.8/s). A provider across the internet needs more
 * (EMAIL_RATE_TOLERANCE_MS).
 */
export const EMAIL_RATE_TOLERANCE_MS = 20;

/** The email provider's account limits (SPEC R4): 45 in flight, 40 per second, across all workers. */
export const EMAIL_PROVIDER_LIMITS = {
  concurrency: { key: 'email-provider', max: 45 },
  // Right before the HTTP request, so the database work before it cannot bunch sends up.
  rate: { key: 'email-provider', perSecond: 40, toleranceMs: EMAIL_RATE_TOLERANCE_MS, at: 'handler' },
} as const;

/**
 * Retry budget of email jobs: 8 attempts (waits up to 2+4+…+128 s, about 2 minutes on
 * average) instead of the default 6 (about 31 s on average), so a 30-second provider outage
 * followed by a spell of 429s — the night in SPEC §8 — cannot use a job's attempts up.
 */
export const EMAIL_RETRY = { maxAttempts: 8 } as const;

/** One employee's slip of one month: the payload of render-slip and of send-slip-email. */
export const slipPayload = z.object({
  companyId: z.string().uuid(),
  employeeId: z.number().int().positive(),
  month,
  payrollRunId: z.string().uuid().optional(),
  /** n-th explicit resend by HR; absent for the monthly run. */
  resend: z.number().int().positive().optional(),
});

/** Key of one slip: `slip:2026-11:emp-48213`, `slip:2026-11:emp-48213:resend-1` for an explicit resend. */
export function slipKey(p: { month: string; employeeId: number; resend?: number | undefined }): string {
  return `slip:${p.month}:emp-${p.employeeId}${p.resend ? `:resend-${p.resend}` : ''}`;
}

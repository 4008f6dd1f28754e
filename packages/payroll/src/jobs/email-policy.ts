/**
 * The policy every email job shares (send-slip-email, send-reminder-email,
 * send-bank-status-email): they send through the one provider account, so they share its limits,
 * and they share the retry budget that outlasts a provider outage.
 */
import type { JobLimits, RateWindow } from '@beton/jobs/client';

/**
 * How the provider counts its 40 per second: per second of the clock (the simulator, and
 * SendGrid's `X-RateLimit-Reset`, which names the end of that second). The limiter places 40
 * sends in each second, so the pace is the limit itself. With a sliding window ('sliding') the
 * sends must be spaced by (1000 + slack) / 40 ms and the pace falls below it: 39.2/s at 20 ms,
 * where ~50–60 of 5,000 sends woke more than 10 ms late on a loaded 2-core machine and gave
 * their place up (0.950–0.962 of 40/s end to end).
 */
export const EMAIL_RATE_WINDOW = 'fixed' as const;

/**
 * The email rate limit's timing slack, 'fixed' window (see waitForRate): the places of each
 * second run from 37.5 to 866.25 ms into it, 21.25 ms apart; a send may leave until 925 ms into
 * its second, and its request has the last 75 ms to arrive. Arrival jitter measured on one
 * 2-core machine (bench, 5,000 sends): median 0.2 ms, p99 6–7 ms, max 28–42 ms; under the whole
 * test suite's load a request took more than the 50 ms that 100 ms of slack left (1 × 429 in
 * two suite runs). More slack is not free: the places bunch into less of each second and the
 * email slots, freed in the same rhythm, bind more (the bench at 40/s: efficiency 0.968–0.974
 * with 100, 0.959–0.968 with 200), so the default is 150. The 37.5 ms that open each second
 * cover a provider clock up to that far behind ours; a provider farther away needs more
 * (EMAIL_RATE_TOLERANCE_MS).
 */
export const EMAIL_RATE_TOLERANCE_MS = 150;

/**
 * Slots of the email concurrency limit kept for HR's one-off sends (R13): on top of the bulk's
 * 45, so the bulk keeps its pace and a resend never waits for one of its slots. The 40/s is
 * shared: a send takes its place under the rate limit only once it holds a slot, so at most
 * 45 + 5 places are ever taken ahead of it, 1.25 s at 40/s.
 */
export const EMAIL_INTERACTIVE_SLOTS = 5;

/** The email provider's account limits (SPEC R4): 45 in flight, 40 per second, across all workers. */
export const EMAIL_PROVIDER_LIMITS = {
  concurrency: { key: 'email-provider', max: 45, reserved: EMAIL_INTERACTIVE_SLOTS },
  // Right before the HTTP request, so the database work before it cannot bunch sends up.
  rate: { key: 'email-provider', perSecond: 40, window: EMAIL_RATE_WINDOW, toleranceMs: EMAIL_RATE_TOLERANCE_MS, at: 'handler' },
} as const;

/** The email limits a deployment sets (EMAIL_CONCURRENCY_LIMIT, EMAIL_RATE_LIMIT, …; defaults: EMAIL_PROVIDER_LIMITS). */
export interface EmailLimitSettings {
  concurrency: number;
  interactiveSlots: number;
  ratePerSecond: number;
  window: RateWindow;
  toleranceMs: number;
}

/** The deployment setting the email jobs read in `configure`. */
export interface EmailJobSettings {
  emailLimits: EmailLimitSettings;
}

/** An email job's limits with the deployment's numbers: every email job shares the one provider account. */
export function emailProviderLimits(s: EmailLimitSettings): JobLimits {
  return {
    concurrency: { key: EMAIL_PROVIDER_LIMITS.concurrency.key, max: s.concurrency, reserved: s.interactiveSlots },
    rate: { ...EMAIL_PROVIDER_LIMITS.rate, perSecond: s.ratePerSecond, window: s.window, toleranceMs: s.toleranceMs },
  };
}

/**
 * Retry budget of email jobs: 8 attempts (waits up to 2+4+…+128 s, about 2 minutes on
 * average) instead of the default 6 (about 31 s on average), so a 30-second provider outage
 * followed by a spell of 429s — the night in SPEC §8 — cannot use a job's attempts up.
 */
export const EMAIL_RETRY = { maxAttempts: 8 } as const;

/**
 * Retry policy (SPEC R5): exponential backoff with full jitter,
 * `wait = random(0, min(cap, base × 2^attempt))`, at most `maxAttempts` attempts.
 */

export interface RetryPolicy {
  /** Attempts in total, the first included; after the last one the job is `failed`. Default: 6. */
  maxAttempts: number;
  /** Base of the exponential, ms. Default: 1000. */
  baseMs: number;
  /** Upper bound of any single wait, ms. Default: 300000. */
  capMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ maxAttempts: 6, baseMs: 1000, capMs: 300_000 });

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) throw new Error(`maxAttempts must be a whole number >= 1, got ${policy.maxAttempts}`);
  if (!(policy.baseMs >= 0)) throw new Error(`baseMs must be >= 0, got ${policy.baseMs}`);
  if (!(policy.capMs >= policy.baseMs)) throw new Error(`capMs (${policy.capMs}) must be >= baseMs (${policy.baseMs})`);
  return policy;
}

/** The largest wait after failed attempt `attempt` (1-based): min(cap, base × 2^attempt). */
export function backoffCeilingMs(attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  return Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
}

export interface RetryDecisionInput {
  /** The attempt that just failed, 1-based. */
  attempt: number;
  policy?: RetryPolicy;
  /** A provider's reset time (429 Retry-After): the wait is never shorter. */
  retryAfterMs?: number | undefined;
  /** Source of randomness in [0, 1). Default: Math.random. */
  random?: () => number;
}

/** Full-jitter wait before the next attempt, ms. */
export function retryDelayMs({ attempt, policy = DEFAULT_RETRY_POLICY, retryAfterMs, random = Math.random }: RetryDecisionInput): number {
  const jittered = Math.floor(random() * backoffCeilingMs(attempt, policy));
  return Math.max(jittered, Math.ceil(retryAfterMs ?? 0));
}

/** Whether another attempt is allowed after `attempt` failed transiently. */
export function canRetry(attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): boolean {
  return attempt < policy.maxAttempts;
}

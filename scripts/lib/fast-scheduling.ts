/**
 * Scheduled sends in seconds instead of minutes, for tests and the fast drill: the simulator's
 * cancel cutoff (SendGrid: 10 minutes) and the workers' matching settings, keeping the product's
 * rule — send_at = window end + lead > cutoff + skew + quiet time + two settle runs.
 */
export const FAST_SCHEDULING = {
  /** startProviderSimulator({ scheduledSends }) */
  simulator: { cancelCutoffMs: 1000 },
  /** The workers' environment. */
  env: {
    EMAIL_BATCH_WINDOW_MS: '2000',
    EMAIL_CANCEL_CUTOFF_MS: '1000',
    EMAIL_CLOCK_SKEW_MS: '200',
    EMAIL_SETTLE_QUIET_MS: '8000',
    EMAIL_SETTLE_CRON: '* * * * * *',
    EMAIL_SETTLE_EVERY_MS: '1000',
    EMAIL_SEND_LEAD_MS: '14000',
  },
} as const;

/**
 * What the Event Webhook endpoint counts (email_webhook_counts), per request or per event. A
 * module of its own, free of zod and the database: the console's pages name each outcome in their
 * language from this list.
 */
export const WEBHOOK_OUTCOMES = [
  'stored',
  'duplicate',
  'unknown_event',
  'unknown_key',
  'malformed_event',
  'bad_signature',
  'stale_timestamp',
  'too_large',
  'malformed',
  'no_public_key',
] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

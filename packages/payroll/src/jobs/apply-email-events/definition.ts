import { defineJob } from '@beton/jobs/client';
import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Applies a batch of stored Event Webhook events (issue 16) to their deliveries: enqueued by
 * the web app's webhook endpoint in the transaction that stored them, so the endpoint answers
 * SendGrid at once. Idempotent: events already applied change nothing.
 */
export const applyEmailEventsJob = defineJob({
  name: 'apply-email-events',
  queue: 'maintenance',
  schema: z.object({ eventIds: z.array(z.string().min(1)).min(1) }),
  timeoutMs: 25_000,
  idempotencyKey: (p) =>
    `email-events:${createHash('sha256')
      .update([...p.eventIds].sort().join(','))
      .digest('base64url')
      .slice(0, 22)}`,
});

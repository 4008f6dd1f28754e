/**
 * An email delivery's status (`email_deliveries.status`, the `DeliveryStatus` enum), one row per
 * idempotency key (exactly-once.md):
 *
 *   sending ──(the provider accepted it; or evidence: a webhook event, the Activity API)──▶ sent
 *   sending ──(the provider certainly refused it, permanently)──▶ failed
 *   failed  ──(a new attempt at the key: an admin's retry)──▶ sending
 *   failed  ──(evidence it was accepted after all: an event for the key)──▶ sent
 *   sent    ──(its SendGrid batch was cancelled, so the provider discards it: resent on proof)──▶ sending
 *
 * A sent key is never sent again (a resend is a new key), except when the scheduled send it went
 * out in was cancelled before `send_at` (settle.ts): SendGrid then discards it, and the statement
 * that moves it back counts `resent_on_proof` — the database refuses `sent → sending` without
 * that count (migration 20261206104500_delivery_resent_on_proof). An attempt whose
 * outcome is unknown stays `sending` with `outcome_unknown_since` set. The statements that move
 * it are email.ts's (an attempt and its outcome) and events.ts's (an event is evidence of
 * acceptance); the database refuses any other change (db/src/status-machine.ts), so a sent key
 * cannot be put back to `sending` by a late attempt.
 */
import type { DeliveryStatus } from '@beton/db/enums';
import { defineStatusMachine } from '@beton/db/status-machine';

export const deliveryStatus = defineStatusMachine<DeliveryStatus>({
  table: 'email_deliveries',
  initial: ['sending'],
  transitions: {
    sending: ['sent', 'failed'],
    sent: ['sending'],
    failed: ['sending', 'sent'],
  },
});

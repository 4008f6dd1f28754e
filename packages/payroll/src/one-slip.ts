/**
 * One slip per employee per month, whatever path sends it (R13). The month's slip is one thing;
 * the monthly run's job, HR's resends and an admin's retry of either are attempts at it, each
 * under its own delivery key (`slip:2026-11:emp-48213`, `…:resend-2`). An extra copy HR
 * confirmed (`…:copy-3`) is not an attempt: it is a second email on purpose.
 *
 * - Before an attempt's request leaves, with its own delivery already recorded as possibly
 *   accepted (deliverEmail's `announced`: after its turn under the rate limit), it looks at the
 *   other attempts: one the provider accepted supersedes it (nothing sent); one whose outcome
 *   is still unknown (in flight, or its answer was lost) makes it wait and try again. Two
 *   attempts that both announce before they look cannot both miss each other, so at most one
 *   is accepted. (From December 3, 23:24 to December 4 the look came before the announce — the
 *   unknown outcome was moved after the rate limit's turn, the look stayed in front of it —
 *   and two attempts waiting for their turns at once could both send: one-slip-race.test.)
 * - An attempt that was accepted closes the other attempts' open or failed jobs (superseded).
 * - What "accepted for this employee and month" is: slipAcceptedKeySql (slip-attempts.ts).
 */
import { prepared } from '@beton/db';
import { SupersededError, TransientError } from '@beton/jobs/client';
import { slipKey } from './jobs/slip-payload.ts';
import type { DeliveryResult } from './email.ts';
import { sendSlip, type MailDeps } from './send.ts';
import { attemptLabel, slipAcceptedKeySql, slipInFlightKeySql, supersedeOtherAttempts } from './slip-attempts.ts';
import type { RenderSlipPayload } from './slip.ts';

// Before every slip email's request (prepared once per connection: @beton/db prepared).
const ONE_SLIP_CHECK = prepared(
  `select ${slipAcceptedKeySql('$1::int', '$2::text', '$3::text')} as accepted,
          ${slipInFlightKeySql('$1::int', '$2::text', '$3::text')} as in_flight,
          exists (select 1 from slip_resends r where r.employee_id = $1 and r.month = $2 and not r.copy) as siblings`,
);

/**
 * How long an attempt waits for another one whose outcome is not known yet before it looks again
 * (× 0.5–1.5: two attempts that announced at once and saw each other do not meet again).
 */
const IN_FLIGHT_RETRY_MS = 2_000;

/**
 * The send-slip-email job under the one-slip rule. An extra copy is sent as it is. Any other
 * attempt checks the others right before its request leaves (see the module comment) — after
 * deliverEmail has recorded this attempt as possibly accepted (`announced`), which is what makes
 * the check safe — and, once accepted, closes the other attempts' jobs.
 */
export async function sendSlipOnce(deps: MailDeps, payload: RenderSlipPayload): Promise<DeliveryResult> {
  if (payload.copy) return sendSlip(deps, payload);
  const key = slipKey(payload);
  let siblings = payload.resend !== undefined;
  const announced = deps.delivery?.announced;
  const guarded: MailDeps = {
    ...deps,
    delivery: {
      ...deps.delivery,
      announced: async () => {
        const { rows } = await deps.pool.query<{ accepted: string | null; in_flight: string | null; siblings: boolean }>({
          ...ONE_SLIP_CHECK,
          values: [payload.employeeId, payload.month, key],
        });
        const r = rows[0]!;
        siblings ||= r.siblings;
        if (r.accepted) {
          throw new SupersededError(r.accepted, `not sent: this slip was already delivered by ${attemptLabel(r.accepted)} (${r.accepted})`);
        }
        if (r.in_flight) {
          throw new TransientError(
            'slip_in_flight',
            `not sent yet: ${attemptLabel(r.in_flight)} of this slip (${r.in_flight}) is being sent and its outcome is not known yet`,
            {
              retryAfterMs: Math.round(IN_FLIGHT_RETRY_MS * (0.5 + Math.random())),
            },
          );
        }
        await announced?.();
      },
    },
  };
  const result = await sendSlip(guarded, payload);
  if (siblings && result.sent) await supersedeOtherAttempts(deps.pool, { employeeId: payload.employeeId, month: payload.month, deliveredKey: key });
  return result;
}

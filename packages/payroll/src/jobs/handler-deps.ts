import type { Pool } from '@beton/db';
import type { LockService } from '@beton/jobs/client';
import type { SlipData } from '@beton/pdf';
import type { ActivityLookup } from '../activity.ts';
import type { BankClient } from '../bank.ts';
import type { Mailer } from '../mailer.ts';
import type { BatchSource, SchedulingSettings } from '../scheduling.ts';
import type { RetentionPolicy } from '../retention.ts';
import type { PayrollJobClient } from './index.ts';

/** What payroll's handlers use, wired by the worker app (apps/worker/src/handlers.ts); each handler is a few lines over a payroll service. */
export interface PayrollHandlerDeps {
  pool: Pool;
  jobs: PayrollJobClient;
  lock: LockService;
  mailer: Mailer;
  /** The Email Activity API lookups, when EMAIL_ACTIVITY_API=on. */
  activity: ActivityLookup | undefined;
  /** The bank's API, when BANK_API_URL is set. */
  bank: BankClient | undefined;
  /** The render threads: only a pdf-render worker has them. */
  renderPool: { render(data: SlipData, run: { signal: AbortSignal; key?: string; password?: string | undefined }): Promise<Uint8Array> } | undefined;
  /**
   * The bulk's scheduled sends (EMAIL_BATCH_WINDOW_MS, EMAIL_SEND_LEAD_MS, EMAIL_CANCEL_CUTOFF_MS,
   * EMAIL_CLOCK_SKEW_MS: packages/payroll/src/scheduling.ts) and the batch of the current window.
   */
  email: { scheduling: SchedulingSettings; batches: BatchSource };
  /** RETENTION_* (packages/payroll/src/retention.ts). */
  retention: Partial<RetentionPolicy>;
  /** This worker's id, recorded as who ran a payroll run or a bank poll. */
  workerId: string;
}

/**
 * What the email services need from a handler: the pool, the mailer, the job's signal, time and
 * hold; `bulk` sends join the current window's batch (scheduled sends), the others go at once.
 */
export function mailDeps(
  deps: PayrollHandlerDeps,
  ctx: { signal: AbortSignal; rateLimit: () => Promise<void>; rateTurnOnTime: () => boolean; timeLeftMs: () => number; hold: () => () => void },
  options: { bulk?: boolean } = {},
) {
  return {
    pool: deps.pool,
    mailer: deps.mailer,
    delivery: {
      ...(options.bulk ? { batch: () => deps.email.batches.current() } : {}),
      signal: ctx.signal,
      beforeSend: ctx.rateLimit,
      turnOnTime: ctx.rateTurnOnTime,
      timeLeftMs: ctx.timeLeftMs,
      hold: ctx.hold,
    },
  };
}

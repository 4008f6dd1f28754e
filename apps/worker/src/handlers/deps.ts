import type { Pool } from '@beton/db';
import type { BetonJobName, BetonJobs, DefinitionNamed, JobClient, JobHandler, LockService, ParsedPayloadOf } from '@beton/jobs';
import type { ActivityLookup, BankClient, Mailer } from '@beton/payroll';
import type { WorkerConfig } from '../config.ts';
import type { RenderPool } from '../render-pool.ts';

/** What handlers may use; each handler is a few lines over a domain service. */
export interface HandlerDeps {
  pool: Pool;
  jobs: JobClient<BetonJobs>;
  lock: LockService;
  mailer: Mailer;
  /** The Email Activity API lookups, when EMAIL_ACTIVITY_API=on. */
  activity: ActivityLookup | undefined;
  bank: BankClient | undefined;
  renderPool: RenderPool | undefined;
  config: WorkerConfig;
  workerId: string;
}

/** The handler of job `Name`: its payload is what the definition's schema parsed. */
export type HandlerFactory<Name extends BetonJobName> = (deps: HandlerDeps) => JobHandler<ParsedPayloadOf<DefinitionNamed<BetonJobs, Name>>>;

/** What the email services need from a handler: the pool, the mailer, the job's signal, time and hold. */
export function mailDeps(deps: HandlerDeps, ctx: { signal: AbortSignal; rateLimit: () => Promise<void>; timeLeftMs: () => number; hold: () => () => void }) {
  return {
    pool: deps.pool,
    mailer: deps.mailer,
    activity: deps.activity,
    delivery: {
      settleMs: deps.config.email.settleMs,
      evidenceWaitMs: deps.config.email.evidenceWaitMs,
      signal: ctx.signal,
      beforeSend: ctx.rateLimit,
      timeLeftMs: ctx.timeLeftMs,
      hold: ctx.hold,
    },
  };
}

import type { AnyJobDefinition } from '@beton/jobs';
import type { WorkerConfig } from './config.ts';

/** Applies the deployment's limits and overrides to the static definitions. */
export function tuneDefinitions(definitions: readonly AnyJobDefinition[], config: Pick<WorkerConfig, 'emailLimits' | 'retryBaseMs' | 'sweepCron' | 'bankPollCron' | 'retentionCron'>): AnyJobDefinition[] {
  return definitions.map((def) => {
    let out: AnyJobDefinition = def;
    if (def.limits?.concurrency?.key === 'email-provider' || def.limits?.rate?.key === 'email-provider') {
      out = {
        ...out,
        limits: {
          concurrency: { key: 'email-provider', max: config.emailLimits.concurrency, reserved: config.emailLimits.interactiveSlots },
          rate: { ...def.limits?.rate, key: 'email-provider', perSecond: config.emailLimits.ratePerSecond, window: config.emailLimits.window, toleranceMs: config.emailLimits.toleranceMs },
        },
      };
    }
    if (config.retryBaseMs) out = { ...out, retry: { ...out.retry, baseMs: config.retryBaseMs, capMs: Math.max(config.retryBaseMs, out.retry?.capMs ?? 300_000) } };
    if (def.name === 'sweep-stuck-jobs' && def.schedule) out = { ...out, schedule: { ...def.schedule, cron: config.sweepCron } };
    if (def.name === 'poll-bank' && def.schedule) out = { ...out, schedule: { ...def.schedule, cron: config.bankPollCron } };
    if (def.name === 'purge-history' && def.schedule) out = { ...out, schedule: { ...def.schedule, cron: config.retentionCron } };
    return out;
  });
}

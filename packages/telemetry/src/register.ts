/**
 * Loaded before a Beton Node program (bin/beton.mjs, the worker's development launcher): when
 * the OTEL_* settings ask for tracing, starts it before the program's modules load; otherwise
 * does nothing and loads no OpenTelemetry module. A bad value is left to the program's own
 * config module, which reports it with the rest (tracing then stays off).
 */
import path from 'node:path';
import { otelEnvSchema, tracingSettings } from './settings.ts';

/** beton-worker-<queue> for a worker (its --queue argument), beton-<program> otherwise. */
export function defaultServiceName(argv: readonly string[]): string {
  const program = path.basename(argv[1] ?? 'beton').replace(/\.(m?js|ts)$/, '');
  const queueAt = argv.indexOf('--queue');
  const queue = queueAt > 0 ? argv[queueAt + 1] : argv.find((a) => a.startsWith('--queue='))?.slice('--queue='.length);
  return queue ? `beton-worker-${queue}` : `beton-${program === 'main' ? 'worker' : program}`;
}

const parsed = otelEnvSchema.safeParse(process.env);
const settings = parsed.success ? tracingSettings(parsed.data) : undefined;
if (settings) {
  const { startTracing } = await import('./start.ts');
  const tracing = await startTracing(settings, { defaultServiceName: defaultServiceName(process.argv) });
  // The program stops itself (its own SIGTERM handling); the spans still buffered go out as it exits.
  process.once('beforeExit', () => void tracing.shutdown());
}

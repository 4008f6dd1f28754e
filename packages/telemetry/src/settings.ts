import { z } from 'zod';

/**
 * The OpenTelemetry settings Beton reads: the standard `OTEL_*` variables only
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), validated
 * like every other setting. Each app spreads `otelEnvShape` into its one config schema (the
 * worker's config.ts, the web app's env.ts), so a bad value stops the process with its name.
 * Tracing is OFF unless an exporter or an OTLP endpoint is set: then no OpenTelemetry module
 * is even loaded.
 */
const emptyIsUnset = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export const otelEnvShape = {
  /** `otlp` (OTLP/HTTP, protobuf-free JSON), `console` (spans on stdout) or `none`. Unset with no endpoint: tracing off. */
  OTEL_TRACES_EXPORTER: emptyIsUnset(z.enum(['otlp', 'console', 'none'], { message: 'OTEL_TRACES_EXPORTER must be otlp, console or none' })),
  /** The collector's OTLP/HTTP base URL (e.g. http://otel-collector:4318); spans go to `<url>/v1/traces`. Default: http://localhost:4318. */
  OTEL_EXPORTER_OTLP_ENDPOINT: emptyIsUnset(z.string().url('OTEL_EXPORTER_OTLP_ENDPOINT must be a URL, e.g. http://otel-collector:4318')),
  /** The traces endpoint itself (wins over OTEL_EXPORTER_OTLP_ENDPOINT; used as given). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: emptyIsUnset(z.string().url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be a URL')),
  /** Default: parentbased_always_on (every trace). `parentbased_traceidratio` with OTEL_TRACES_SAMPLER_ARG=0.01 keeps 1 %. */
  OTEL_TRACES_SAMPLER: emptyIsUnset(z.enum(SAMPLERS, { message: `OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}` })),
  /** The ratio of the *traceidratio samplers, 0–1. Default: 1. */
  OTEL_TRACES_SAMPLER_ARG: emptyIsUnset(z.coerce.number().min(0, 'OTEL_TRACES_SAMPLER_ARG is a ratio, 0–1').max(1, 'OTEL_TRACES_SAMPLER_ARG is a ratio, 0–1')),
  /** The service name on every span. Default: beton-worker-<queue>, beton-web. */
  OTEL_SERVICE_NAME: emptyIsUnset(z.string().min(1)),
  /** `true` turns tracing off whatever else is set (the standard kill switch). */
  OTEL_SDK_DISABLED: emptyIsUnset(z.enum(['true', 'false'])),
};

export const otelEnvSchema = z.object(otelEnvShape);
export type OtelEnv = z.infer<typeof otelEnvSchema>;

export interface TracingSettings {
  exporter: 'otlp' | 'console';
  /** The full traces URL (…/v1/traces) for `otlp`. */
  tracesUrl: string;
  sampler: (typeof SAMPLERS)[number];
  ratio: number;
  serviceName: string | undefined;
}

/** What the settings ask for: undefined when tracing is off (nothing set, `none`, or OTEL_SDK_DISABLED=true). */
export function tracingSettings(env: OtelEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporter = env.OTEL_TRACES_EXPORTER ?? (endpoint ? 'otlp' : undefined);
  if (!exporter || exporter === 'none') return undefined;
  return {
    exporter,
    tracesUrl: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`,
    sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    ratio: env.OTEL_TRACES_SAMPLER_ARG ?? 1,
    serviceName: env.OTEL_SERVICE_NAME,
  };
}

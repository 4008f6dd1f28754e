import { createRequire, register } from 'node:module';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { setJobTracing } from '@beton/jobs/tracing';
import type { TracingSettings } from './settings.ts';

export interface StartTracingOptions {
  /** service.name when OTEL_SERVICE_NAME is unset (beton-worker-send-email, beton-web). */
  defaultServiceName: string;
  /** Span processors instead of the settings' exporter (tests: an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
  /** Incoming HTTP requests not traced (health probes and scrapes). Default: /healthz, /readyz, /metrics, /api/health, /api/metrics. */
  ignoreIncomingPaths?: readonly string[];
}

export interface RunningTracing {
  /** Exports what is buffered and stops: call before the process exits. */
  shutdown(): Promise<void>;
}

const IGNORED_PATHS = ['/healthz', '/readyz', '/metrics', '/api/health', '/api/metrics'];

/**
 * Starts OpenTelemetry's Node SDK for this process: HTTP (incoming requests, the email
 * provider's and the bank's calls) and PostgreSQL (node-postgres) spans, the engine's job
 * spans (@beton/jobs/tracing), exported over OTLP/HTTP by a batch processor. Call it before the
 * program's own modules load (the launchers do: register.ts), so the instrumentations see `pg`
 * and `http` when they are first imported. Every OpenTelemetry module is imported here, on
 * demand: a process with tracing off loads none.
 */
export async function startTracing(settings: TracingSettings, options: StartTracingOptions): Promise<RunningTracing> {
  // ES modules are instrumented through import-in-the-middle's loader hook, limited to the
  // modules traced (every other import stays untouched).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['pg', 'http', 'https', 'node:http', 'node:https'] } });
  const [{ NodeSDK }, sdkTrace, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, api, { createJobTracing }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/api'),
    import('./job-tracing.ts'),
  ]);
  const root = {
    always_on: () => new sdkTrace.AlwaysOnSampler(),
    always_off: () => new sdkTrace.AlwaysOffSampler(),
    traceidratio: () => new sdkTrace.TraceIdRatioBasedSampler(settings.ratio),
  };
  const kind = settings.sampler.replace(/^parentbased_/, '') as keyof typeof root;
  const sampler = settings.sampler.startsWith('parentbased_') ? new sdkTrace.ParentBasedSampler({ root: root[kind]() }) : root[kind]();
  const ignored = options.ignoreIncomingPaths ?? IGNORED_PATHS;
  const spanProcessors = options.spanProcessors ?? [
    new sdkTrace.BatchSpanProcessor({
      exporter: settings.exporter === 'console' ? new sdkTrace.ConsoleSpanExporter() : new OTLPTraceExporter({ url: settings.tracesUrl }),
    }),
  ];
  const sdk = new NodeSDK({
    serviceName: settings.serviceName ?? options.defaultServiceName,
    sampler,
    spanProcessors,
    // Traces only: the SDK would otherwise also start OTLP metric and log exporters from the
    // environment (Beton's metrics are Prometheus', docs/metrics.md; its logs are pino's).
    metricReaders: [],
    logRecordProcessors: [],
    // No resource detectors (host, OS, process) run at start: service.name and the SDK's own.
    autoDetectResources: false,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => ignored.includes((req.url ?? '').split('?')[0]!),
        // An outgoing request outside any span (a readiness probe of a simulator, a scrape) is no trace of its own.
        requireParentforOutgoingSpans: true,
      }),
      // Statements outside a job or a request (graphile-worker's polling, heartbeats) are not
      // traced, nor is taking a connection from the pool (a span per statement, doubling the
      // spans of a slip for a wait the statement's own span already includes).
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
  sdk.start();
  // The HTTP instrumentation patches `http` when it is next required: a server made before
  // (Next's, which runs this from its instrumentation hook) would otherwise stay untraced.
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');
  const shutdown = async () => {
    setJobTracing(undefined);
    await sdk.shutdown();
  };
  setJobTracing({ ...createJobTracing(api, api.trace.getTracer('@beton/jobs')), shutdown });
  return { shutdown };
}

import type { Attributes, Link, SpanContext, Tracer } from '@opentelemetry/api';
import type { AttemptSpan, AttemptStart, JobTracing } from '@beton/jobs/tracing';

/**
 * The engine's tracing (@beton/jobs/tracing) with the OpenTelemetry API, after the messaging
 * semantic conventions (https://opentelemetry.io/docs/specs/semconv/messaging/messaging-spans/):
 *
 * - an enqueue is a PRODUCER span `send <queue>` (`messaging.operation.type` send; a batch, the
 *   monthly fan-out, carries `messaging.batch.message_count`); its context is what the new jobs
 *   store as their `traceparent`;
 * - each attempt is a CONSUMER span `process <queue>`, child of that stored context, with the
 *   job's id, attempt number and Beton's own attributes; a retry (attempt 2+) is a new span
 *   linked to the first failed attempt's span;
 * - the span ends with the attempt's outcome: an error status with `error.type` (the error code)
 *   and `beton.error_kind` when it failed or will retry; `beton.superseded_by` when another job
 *   did its work.
 */
export const MESSAGING_SYSTEM = 'graphile_worker';

/**
 * The OpenTelemetry API, passed in rather than imported: this module is bundled into the
 * launchers' preload (register.ts), whose static imports would load it with tracing off.
 */
type Api = typeof import('@opentelemetry/api');

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent (version 00) of a span context. */
export function formatTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & 1 ? '01' : '00'}`;
}

/** The span context a stored traceparent names (remote), or undefined for anything else. */
export function parseTraceparent(text: string | null | undefined): SpanContext | undefined {
  const m = text ? TRACEPARENT.exec(text) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16) & 1, isRemote: true };
}

/** Beton's attributes read from a job's payload and key: the company, the month and the slip. */
export function betonAttributes(payload: unknown, idempotencyKey?: string): Attributes {
  const out: Attributes = {};
  if (payload && typeof payload === 'object') {
    const p = payload as Record<string, unknown>;
    if (typeof p.companyId === 'string') out['beton.company_id'] = p.companyId;
    if (typeof p.month === 'string') out['beton.month'] = p.month;
  }
  // slip:2026-11:emp-48213[:resend-1|:copy-2], the render job's key; the email job's adds :email.
  const slip = idempotencyKey ? /^slip:\d{4}-\d{2}:emp-\d+(?::(?:resend|copy)-\d+)?/.exec(idempotencyKey) : null;
  if (slip) out['beton.slip_key'] = slip[0];
  if (idempotencyKey) out['beton.job_key'] = idempotencyKey;
  return out;
}

export function createJobTracing(api: Api, tracer: Tracer): Omit<JobTracing, 'shutdown'> {
  const { context, isSpanContextValid, SpanKind, SpanStatusCode, trace } = api;
  return {
    async produce(e, write) {
      const attributes: Attributes = {
        'messaging.system': MESSAGING_SYSTEM,
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        'messaging.destination.name': e.queue,
        'beton.task': e.task,
        ...(e.count !== undefined && e.count !== 1 ? { 'messaging.batch.message_count': e.count } : {}),
      };
      return tracer.startActiveSpan(`send ${e.queue}`, { kind: SpanKind.PRODUCER, attributes }, async (span) => {
        try {
          // Jobs enqueued under no sampled span store nothing: their attempts then sample afresh.
          return await write(span.isRecording() ? formatTraceparent(span.spanContext()) : null);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          throw error;
        } finally {
          span.end();
        }
      });
    },

    startAttempt(e: AttemptStart): AttemptSpan {
      const parent = parseTraceparent(e.traceparent);
      const first = e.attempt > 1 ? parseTraceparent(e.firstAttempt) : undefined;
      const links: Link[] = first ? [{ context: first, attributes: { 'beton.link': 'first_attempt' } }] : [];
      const span = tracer.startSpan(
        `process ${e.queue}`,
        {
          kind: SpanKind.CONSUMER,
          links,
          attributes: {
            'messaging.system': MESSAGING_SYSTEM,
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': e.queue,
            'messaging.message.id': String(e.jobId),
            'beton.task': e.task,
            'beton.attempt': e.attempt,
            ...betonAttributes(e.payload, e.idempotencyKey),
          },
        },
        parent ? trace.setSpanContext(context.active(), parent) : context.active(),
      );
      const active = trace.setSpan(context.active(), span);
      return {
        traceparent: span.isRecording() ? formatTraceparent(span.spanContext()) : null,
        run: (fn) => context.with(active, fn),
        end(outcome, error, endTime) {
          span.setAttribute('beton.outcome', outcome);
          if (error) {
            span.setAttributes({ 'error.type': error.code, 'beton.error_kind': error.kind });
            if (error.supersededBy !== undefined) span.setAttribute('beton.superseded_by', error.supersededBy);
            // superseded and handed back are not errors of the job; retrying and failed are.
            if (outcome === 'retrying' || outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
            else span.addEvent(outcome, { reason: error.message });
          }
          span.end(endTime);
        },
      };
    },

    logFields(): Record<string, string> {
      const sc = trace.getActiveSpan()?.spanContext();
      return sc && isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
    },
  };
}

/**
 * The engine's spans in one process, exported in memory: a job enqueued inside a span is
 * processed in a child span with the messaging attributes; a retry is a new span linked to the
 * first failed attempt (kept in the job's row); a superseded job ends its span with what
 * superseded it; with tracing off the engine stores no trace context.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { createJobClient, defineJob, SupersededError, TransientError } from '@beton/jobs/client';
import type { RunningWorker } from '@beton/jobs';
import { jobTracing } from '@beton/jobs/tracing';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testWorker, waitFor } from '../../jobs/test/helpers.ts';
import { startTracing, type RunningTracing } from '../src/start.ts';

const flaky = defineJob({
  name: 'test-traced',
  queue: 'test-main',
  schema: z.object({ key: z.string(), companyId: z.string(), month: z.string(), failTimes: z.number().int(), supersededBy: z.string().optional() }),
  timeoutMs: 5_000,
  retry: { baseMs: 20, capMs: 40 },
  idempotencyKey: (p) => `slip:${p.month}:emp-${p.key}:email`,
});

describe('job spans (in-memory exporter)', () => {
  let db: TestDatabase;
  let worker: RunningWorker;
  let tracing: RunningTracing;
  const memory = new InMemorySpanExporter();
  const calls = new Map<string, number>();

  beforeAll(async () => {
    db = await createTestDatabase('job_spans');
    tracing = await startTracing(
      { exporter: 'otlp', tracesUrl: 'http://127.0.0.1:9/unused', sampler: 'parentbased_always_on', ratio: 1, serviceName: undefined },
      { defaultServiceName: 'beton-test', spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] },
    );
    worker = await testWorker(db.pool, {
      definitions: [flaky],
      queue: 'test-main',
      concurrency: 2,
      random: () => 0.5,
      handlers: {
        'test-traced': async (p: z.infer<typeof flaky.schema>) => {
          const n = (calls.get(p.key) ?? 0) + 1;
          calls.set(p.key, n);
          if (p.supersededBy) throw new SupersededError(p.supersededBy, `superseded: ${p.supersededBy} was delivered`);
          if (n <= p.failTimes) throw new TransientError('provider_unavailable', 'the provider answered 503');
        },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await tracing?.shutdown();
    await db?.drop();
  });

  const jobs = () => createJobClient(db.pool, [flaky]);
  const finished = (id: number) => async () =>
    (await db.pool.query<{ status: string }>(`select status from jobs where id = $1`, [id])).rows[0]!.status.match(/^(done|failed|superseded)$/);

  it('processes a job in a child of its enqueue span; a retry links to the first attempt', async () => {
    const tracer = trace.getTracer('test');
    const job = await tracer.startActiveSpan('hr resend', async (span) => {
      try {
        return await jobs().enqueue('test-traced', { key: '7', companyId: 'c-1', month: '2026-11', failTimes: 1 });
      } finally {
        span.end();
      }
    });
    await waitFor('the job finished', finished(job.id), 10_000);
    await waitFor(
      'its spans',
      async () => memory.getFinishedSpans().filter((s) => s.attributes['messaging.message.id'] === String(job.id)).length === 2,
      5_000,
    );

    const spans = memory.getFinishedSpans();
    const producer = spans.find((s) => s.name === 'send test-main')!;
    expect(producer.parentSpanContext?.spanId).toBe(spans.find((s) => s.name === 'hr resend')!.spanContext().spanId);
    const attempts = spans
      .filter((s) => s.attributes['messaging.message.id'] === String(job.id))
      .sort((a, b) => Number(a.attributes['beton.attempt']) - Number(b.attributes['beton.attempt']));
    expect(attempts.map((s) => s.name)).toEqual(['process test-main', 'process test-main']);
    for (const a of attempts) {
      expect(a.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
      expect(a.spanContext().traceId).toBe(producer.spanContext().traceId);
      expect(a.attributes).toMatchObject({
        'messaging.system': 'graphile_worker',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'test-main',
        'beton.company_id': 'c-1',
        'beton.month': '2026-11',
        'beton.slip_key': 'slip:2026-11:emp-7',
      });
    }
    const [first, second] = attempts;
    expect(first!.attributes).toMatchObject({
      'beton.attempt': 1,
      'beton.outcome': 'retrying',
      'error.type': 'provider_unavailable',
      'beton.error_kind': 'transient',
    });
    expect(first!.status).toMatchObject({ code: 2, message: 'the provider answered 503' });
    expect(first!.links).toEqual([]);
    expect(second!.attributes).toMatchObject({ 'beton.attempt': 2, 'beton.outcome': 'done' });
    expect(second!.links.map((l) => l.context.spanId)).toEqual([first!.spanContext().spanId]);
    const row = (
      await db.pool.query<{ traceparent: string; first_attempt_traceparent: string }>(`select traceparent, first_attempt_traceparent from jobs where id = $1`, [
        job.id,
      ])
    ).rows[0]!;
    expect(row.traceparent).toBe(`00-${producer.spanContext().traceId}-${producer.spanContext().spanId}-01`);
    expect(row.first_attempt_traceparent).toBe(`00-${first!.spanContext().traceId}-${first!.spanContext().spanId}-01`);
  });

  it('ends a superseded job’s span with what superseded it', async () => {
    const job = await jobs().enqueue('test-traced', {
      key: '8',
      companyId: 'c-1',
      month: '2026-11',
      failTimes: 0,
      supersededBy: 'slip:2026-11:emp-8:resend-1',
    });
    await waitFor('the job finished', finished(job.id), 10_000);
    await waitFor('its spans', async () => memory.getFinishedSpans().some((s) => s.attributes['messaging.message.id'] === String(job.id)), 5_000);
    const span = memory.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === String(job.id))!;
    expect(span.attributes).toMatchObject({ 'beton.outcome': 'superseded', 'beton.superseded_by': 'slip:2026-11:emp-8:resend-1', 'error.type': 'superseded' });
    expect(span.status.code).not.toBe(2); // not an error of the job
    expect(span.events.map((e) => [e.name, e.attributes?.reason])).toEqual([['superseded', 'superseded: slip:2026-11:emp-8:resend-1 was delivered']]);
    // Enqueued outside any span: the enqueue is the trace's root.
    const producer = memory.getFinishedSpans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
    expect(producer?.name).toBe('send test-main');
    expect(producer?.parentSpanContext).toBeUndefined();
  });

  it('with tracing off, the engine stores no trace context', async () => {
    const registered = jobTracing();
    await tracing.shutdown();
    expect(jobTracing()).toBeUndefined();
    try {
      const job = await jobs().enqueue('test-traced', { key: '9', companyId: 'c-1', month: '2026-11', failTimes: 0 });
      await waitFor('the job finished', finished(job.id), 10_000);
      const row = (
        await db.pool.query<{ traceparent: string | null; first_attempt_traceparent: string | null }>(
          `select traceparent, first_attempt_traceparent from jobs where id = $1`,
          [job.id],
        )
      ).rows[0]!;
      expect(row).toEqual({ traceparent: null, first_attempt_traceparent: null });
    } finally {
      expect(registered).toBeDefined();
    }
  });
});

/**
 * One slip's trace through real processes (docs/tracing.md). The test process traces too, into
 * an in-memory exporter: its fan-out and HR's resend are the producer spans the jobs store as
 * their `traceparent`. The pdf-render and send-email worker processes (the production command
 * lines, OTEL_EXPORTER_OTLP_ENDPOINT set) export over OTLP/HTTP to a receiver this test runs;
 * their spans are read from the wire format (OTLP JSON) and joined with the in-memory ones into
 * one tree per slip: fan-out → render attempt (its SQL) → email enqueue → email attempts (the
 * provider's 503, then a retry linked to the first attempt, its 202), with the messaging and
 * Beton attributes; each worker log line written in a span carries its trace and span ids.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import { resendSlip, runPayroll } from '@beton/payroll';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { startTracing, type RunningTracing } from '@beton/telemetry/start';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll, type Managed } from '../../../scripts/lib/processes.ts';

const MONTH = '2026-10';

/** A span as OTLP/HTTP JSON carries it (opentelemetry-proto's JSON mapping), with its resource's service name. */
interface WireSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
}
type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
const attrs = (list: Array<{ key: string; value: AnyValue }> = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));
// OTLP span kinds: 2 SERVER, 3 CLIENT, 4 PRODUCER, 5 CONSUMER
const KIND = { CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

describe('tracing: one slip across processes (OTLP/HTTP, in-memory)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let receiver: Server;
  let tracing: RunningTracing;
  const memory = new InMemorySpanExporter();
  const wire: WireSpan[] = [];
  const contentTypes = new Set<string>();
  const logLines: Array<Record<string, unknown>> = [];
  const workers: Managed[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        contentTypes.add(`${req.method} ${req.url} ${req.headers['content-type']}`);
        if (req.url !== '/v1/traces') return void res.writeHead(404).end();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: AnyValue }> };
            scopeSpans: Array<{
              spans: Array<
                Omit<WireSpan, 'service' | 'attributes' | 'links'> & { attributes: Array<{ key: string; value: AnyValue }>; links?: WireSpan['links'] }
              >;
            }>;
          }>;
        };
        for (const rs of body.resourceSpans) {
          const service = String(attrs(rs.resource.attributes)['service.name']);
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans) wire.push({ ...s, service, attributes: attrs(s.attributes), links: s.links ?? [], status: s.status ?? {} });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    db = await createTestDatabase('tracing');
    await seedDatabase(db.pool, { employees: 3, companies: 1, invalidRate: 0, seed: 42 });
    provider = await startProviderSimulator({ latencyMs: 20, latencySpreadMs: 0 });
    provider.setFaults({ unavailableForMs: 600_000 }); // 503 until the first attempts failed
    tracing = await startTracing(
      { exporter: 'otlp', tracesUrl: 'http://127.0.0.1:9/unused', sampler: 'parentbased_always_on', ratio: 1, serviceName: 'beton-test' },
      { defaultServiceName: 'beton-test', spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] },
    );
    const env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      LOG_LEVEL: 'info',
      RETRY_BASE_MS: '100',
      HEARTBEAT_MS: '1000',
      DB_POOL_MAX: '4',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    };
    const onLine = (line: string) => {
      if (line.startsWith('{')) logLines.push(JSON.parse(line) as Record<string, unknown>);
    };
    workers.push(spawnWorker({ queue: 'pdf-render', env: { ...env, WORKER_CONCURRENCY: '2' }, onLine }));
    workers.push(spawnWorker({ queue: 'send-email', env, onLine }));
    await Promise.all(workers.map((w) => w.ready));
  }, 120_000);

  afterAll(async () => {
    await stopAll(10_000);
    await tracing?.shutdown();
    await provider?.close();
    await db?.drop();
    receiver?.close();
  });

  it('follows each slip from the fan-out through its render and its email attempts, a retry linked to the first', async () => {
    const jobs = createJobClient(db.pool, jobDefinitions) as unknown as JobClient<BetonJobs>;
    const one = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;
    // One address HR mistyped: its email fails for good (after the 503s), HR fixes it and resends.
    const bad = (await db.pool.query<{ id: number; email: string }>(`select id, email from employees order by id limit 1`)).rows[0]!;
    await db.pool.query(`update employees set email = $2 where id = $1`, [bad.id, bad.email.replace('@', '@@')]);
    await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'tracing-test' }, MONTH);
    await waitUntil(
      'email attempts refused (503)',
      async () => (await one(`select count(distinct job_id)::int as n from job_attempts where error_code = 'provider_unavailable'`)) === 3,
      60_000,
    );
    provider.setFaults({ unavailableForMs: 0 });
    const settled = async () =>
      (await one(`select count(*)::int as n from jobs where status in ('queued', 'running', 'retrying') and queue <> 'maintenance'`)) === 0;
    await waitUntil('every slip sent or failed', settled, 60_000);
    expect(await one(`select count(*)::int as n from jobs where task_name = 'send-slip-email' and status = 'done'`)).toBe(2);

    // HR fixes the address and resends: a new render job, enqueued in HR's action.
    await db.pool.query(`update employees set email = $2 where id = $1`, [bad.id, bad.email]);
    const resend = await resendSlip({ pool: db.pool, jobs }, { employeeId: bad.id, month: MONTH, requestedBy: 'tracing-test' });
    expect(resend.outcome).toBe('created');
    await waitUntil('the resend settled', settled, 60_000);
    const badKey = `slip:${MONTH}:emp-${bad.id}`;

    await stopAll(10_000); // a stopping worker exports the spans it still buffers

    // The wire format: OTLP/HTTP JSON to /v1/traces, one resource per worker process.
    expect([...contentTypes]).toEqual(['POST /v1/traces application/json']);
    expect(new Set(wire.map((s) => s.service))).toEqual(new Set(['beton-worker-pdf-render', 'beton-worker-send-email']));
    for (const s of wire) {
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    }

    // The test process's own spans: the fan-out's enqueue of the render jobs (one batch).
    const local: ReadableSpan[] = memory.getFinishedSpans();
    const fanout = local.filter((s) => s.name === 'send pdf-render');
    expect(fanout.length).toBeGreaterThanOrEqual(1);
    const fanoutSpan = fanout[0]!;
    expect(fanoutSpan.attributes).toMatchObject({
      'messaging.system': 'graphile_worker',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'pdf-render',
      'beton.task': 'render-slip',
    });
    const traceparents = (
      await db.pool.query<{ traceparent: string }>(
        `select traceparent from jobs where task_name = 'render-slip' and idempotency_key not like '%resend%' order by id`,
      )
    ).rows;
    expect(traceparents.map((r) => r.traceparent)).toEqual(Array(3).fill(`00-${fanoutSpan.spanContext().traceId}-${fanoutSpan.spanContext().spanId}-01`));

    const children = (parent: { spanId: string }) => wire.filter((s) => s.parentSpanId === parent.spanId);
    const renders = wire.filter((s) => s.name === 'process pdf-render' && s.parentSpanId === fanoutSpan.spanContext().spanId);
    expect(renders).toHaveLength(3);
    for (const render of renders) {
      expect(render.traceId).toBe(fanoutSpan.spanContext().traceId);
      expect(render.kind).toBe(KIND.CONSUMER);
      expect(render.attributes).toMatchObject({
        'messaging.system': 'graphile_worker',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'pdf-render',
        'beton.task': 'render-slip',
        'beton.attempt': 1,
        'beton.month': MONTH,
        'beton.outcome': 'done',
      });
      expect(render.attributes['beton.slip_key']).toMatch(new RegExp(`^slip:${MONTH}:emp-\\d+$`));
      expect(render.attributes['messaging.message.id']).toMatch(/^\d+$/);
      expect(typeof render.attributes['beton.company_id']).toBe('string');
      // Its SQL (node-postgres) and the email's enqueue are its children.
      expect(
        children(render).some((c) => c.kind === KIND.CLIENT && String(c.attributes['db.system.name'] ?? c.attributes['db.system']).startsWith('postgres')),
      ).toBe(true);
      const enqueue = children(render).filter((c) => c.name === 'send send-email');
      expect(enqueue).toHaveLength(1);
      expect(enqueue[0]!.kind).toBe(KIND.PRODUCER);

      // The email's attempts: children of that enqueue; the first refused (503), the last sent.
      const attempts = children(enqueue[0]!)
        .filter((c) => c.name === 'process send-email')
        .sort((a, b) => Number(a.attributes['beton.attempt']) - Number(b.attributes['beton.attempt']));
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      const [first, ...retries] = attempts;
      expect(first!.attributes).toMatchObject({
        'beton.attempt': 1,
        'beton.outcome': 'retrying',
        'error.type': 'provider_unavailable',
        'beton.error_kind': 'transient',
        'beton.slip_key': render.attributes['beton.slip_key'],
      });
      expect(first!.status.code).toBe(2); // ERROR
      for (const retry of retries) expect(retry.links.map((l) => l.spanId)).toEqual([first!.spanId]);
      const failed = render.attributes['beton.slip_key'] === badKey;
      expect(attempts.at(-1)!.attributes['beton.outcome']).toBe(failed ? 'failed' : 'done');
      // The provider call: @sendgrid/mail's HTTP request, a child of each attempt — its last POST
      // (a bulk slip's attempt may first create its window's batch, POST /v3/mail/batch: 201).
      const statusOf = (a: WireSpan) =>
        children(a)
          .filter((c) => c.kind === KIND.CLIENT && c.attributes['http.request.method'] === 'POST')
          .at(-1)?.attributes['http.response.status_code'];
      expect(statusOf(first!)).toBe(503);
      expect(statusOf(attempts.at(-1)!)).toBe(failed ? 400 : 202);

      // Each log line written in an attempt carries its trace and span.
      const started = logLines.find((l) => l.msg === 'job started' && l.jobId === Number(first!.attributes['messaging.message.id']) && l.attempt === 1);
      expect(started?.trace_id).toBe(first!.traceId);
      expect(started?.span_id).toBe(first!.spanId);
    }

    // HR's resend: its enqueue (in this process) is the parent of the new render attempt.
    const resendSpan = local.find((s) => s.name === 'send pdf-render' && s !== fanoutSpan && s.startTime[0] >= fanoutSpan.endTime[0]);
    expect(resendSpan).toBeDefined();
    const resendRender = wire.find((s) => s.name === 'process pdf-render' && s.parentSpanId === resendSpan!.spanContext().spanId);
    expect(resendRender?.traceId).toBe(resendSpan!.spanContext().traceId);
    expect(resendRender?.attributes['beton.slip_key']).toBe(`${badKey}:resend-1`);
    const resendEmail = wire.find((s) => s.name === 'process send-email' && s.traceId === resendRender!.traceId);
    expect(resendEmail?.attributes['beton.outcome']).toBe('done');
    // Lines outside any span (the worker's own start) carry no trace.
    expect(logLines.find((l) => l.msg === 'worker started')?.trace_id).toBeUndefined();
  }, 240_000);
});

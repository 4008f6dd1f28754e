/**
 * The web server traced (docs/tracing.md): with OTEL_EXPORTER_OTLP_ENDPOINT set, HR's resend
 * is traced from its HTTP request (the tRPC call) to the enqueue of the new render job, whose
 * row stores that enqueue's traceparent, so the worker's attempt continues the same trace. The
 * spans arrive over OTLP/HTTP at a receiver this test runs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../scripts/test/wait-for.ts';
import { webApiSuite } from './http-api.ts';

interface WireSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  service: string;
}
type AnyValue = { stringValue?: string; intValue?: string | number };
const attrs = (list: Array<{ key: string; value: AnyValue }> = []) =>
  Object.fromEntries(list.map((a) => [a.key, a.value.stringValue ?? (a.value.intValue !== undefined ? Number(a.value.intValue) : undefined)]));

const spans: WireSpan[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    const parsed = JSON.parse(body) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: AnyValue }> };
        scopeSpans: Array<{ spans: Array<Omit<WireSpan, 'attributes' | 'service'> & { attributes: Array<{ key: string; value: AnyValue }> }> }>;
      }>;
    };
    for (const rs of parsed.resourceSpans)
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans) spans.push({ ...s, attributes: attrs(s.attributes), service: String(attrs(rs.resource.attributes)['service.name']) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const t = webApiSuite({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}` } });

afterAll(() => {
  receiver.close();
});

describe('tracing the web server', () => {
  it("HR's resend is one trace from its HTTP request to the render job it enqueues", async () => {
    const [a] = t.fx.companies;
    const hr = t.client(await t.signIn(a!.hrEmail, a!.hrPassword));
    const id = a!.employeeIds[21]!; // its email failed (invalid_recipient) in the fixture
    const resend = await hr.employees.resend.mutate({ id, month: t.fx.month });
    expect(resend.outcome).toBe('created');
    const { traceparent } = (
      await t.fx.pool.query<{ traceparent: string | null }>(`select traceparent from jobs where id = $1`, [resend.outcome === 'created' ? resend.jobId : 0])
    ).rows[0]!;
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, spanId] = traceparent!.split('-');

    const producer = await waitFor('the enqueue span', () => spans.find((s) => s.spanId === spanId), 30_000);
    expect(producer).toMatchObject({ name: 'send pdf-render', kind: 4, traceId, service: 'beton-web' });
    expect(producer.attributes).toMatchObject({ 'messaging.destination.name': 'pdf-render', 'beton.task': 'render-slip' });
    // Its ancestors lead to the HTTP request of the tRPC call (a SERVER span), in the same trace.
    const server = await waitFor(
      'the request span',
      () => {
        const byId = new Map(spans.map((s) => [s.spanId, s]));
        for (let s: WireSpan | undefined = producer; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
          if (s.kind === 2 && `${(s.attributes['url.path'] ?? s.attributes['http.target'] ?? s.name) as string}`.includes('/api/trpc/')) return s;
        return undefined;
      },
      30_000,
    );
    expect(server.traceId).toBe(traceId);
    expect(server.attributes['http.request.method'] ?? server.attributes['http.method']).toBe('POST');
    // The SQL of the resend's transaction is in the trace too.
    expect(
      spans.some((s) => s.traceId === traceId && s.kind === 3 && String(s.attributes['db.system.name'] ?? s.attributes['db.system']).startsWith('postgres')),
    ).toBe(true);
  });
});

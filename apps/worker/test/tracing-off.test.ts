/**
 * Tracing costs nothing unless asked for (docs/tracing.md): a worker started with no OTEL_*
 * setting resolves no OpenTelemetry module at all (nor import-in-the-middle's loader), and its
 * log lines carry no trace ids; the same worker with an OTLP endpoint set loads the SDK (so
 * the check can fail). The production command line, its imports recorded by a preload.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, stopAll } from '../../../scripts/lib/processes.ts';

const RECORDER = path.join(import.meta.dirname, 'fixtures/record-imports.mjs');
const NO_OTEL = Object.fromEntries(
  [
    'OTEL_TRACES_EXPORTER',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    'OTEL_TRACES_SAMPLER',
    'OTEL_TRACES_SAMPLER_ARG',
    'OTEL_SERVICE_NAME',
    'OTEL_SDK_DISABLED',
  ].map((k) => [k, '']),
);

describe('tracing off: nothing loaded', () => {
  let db: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    db = await createTestDatabase('tracing_off');
    dir = mkdtempSync(path.join(os.tmpdir(), 'beton-imports-'));
  }, 60_000);

  afterAll(async () => {
    await stopAll(10_000);
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a scheduler with `env`, stops it; returns the OpenTelemetry modules it resolved and its log lines. */
  async function run(name: string, env: Record<string, string>) {
    const file = path.join(dir, `${name}.txt`);
    const lines: string[] = [];
    const worker = spawnWorker({
      name,
      queue: 'maintenance',
      env: {
        DATABASE_URL: db.url,
        LOG_LEVEL: 'info',
        SCHEDULE_TICK_MS: '500',
        NODE_OPTIONS: `--import=${RECORDER}`,
        BETON_TEST_IMPORTS_FILE: file,
        ...NO_OTEL,
        ...env,
      },
      onLine: (l) => lines.push(l),
    });
    await worker.ready;
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few ticks: jobs, SQL
    expect((await worker.stop(10_000)).code).toBe(0);
    return { modules: existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [], lines };
  }

  it('loads no OpenTelemetry module without OTEL_* settings, and the SDK with them', async () => {
    const off = await run('off', {});
    expect(off.modules).toEqual([]);
    expect(off.lines.some((l) => l.includes('"trace_id"'))).toBe(false);

    // The check can fail: an endpoint set (nothing listens there; spans are dropped) loads the SDK.
    const on = await run('on', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(on.modules.some((u) => u.includes('/@opentelemetry/sdk-node/'))).toBe(true);
  }, 120_000);
});

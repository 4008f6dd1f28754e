/**
 * A pdf-render process warms its render threads up before it takes its first job, so the
 * first slips of a run (or after a deploy) come out at full speed: in the end-to-end bench the
 * first ~2 s after the fan-out rendered 16–22 slips cold and 66–79 warmed.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnWorker, stopAll } from '../../../scripts/lib/processes.ts';

describe('render thread warm-up', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await stopAll(10_000);
    await db?.drop();
  });

  it('warms every render thread up before the worker reports ready', async () => {
    db = await createTestDatabase('warmup');
    const lines: Array<{ msg?: string; threads?: number; ms?: number }> = [];
    const worker = spawnWorker({
      queue: 'pdf-render',
      env: { DATABASE_URL: db.url, SENDGRID_API_KEY: 'SG.beton-dev', LOG_LEVEL: 'info', LOG_FORMAT: 'json', WORKER_CONCURRENCY: '2' },
      onLine: (line) => {
        if (line.startsWith('{')) lines.push(JSON.parse(line));
      },
    });
    await worker.ready;
    const warmed = lines.findIndex((l) => l.msg === 'render threads warmed up');
    const ready = lines.findIndex((l) => l.msg === 'worker ready');
    expect(warmed).toBeGreaterThanOrEqual(0);
    expect(warmed).toBeLessThan(ready);
    // One render thread per core, each warmed.
    expect(lines[warmed]!.threads).toBe(os.availableParallelism());
    expect(lines[warmed]!.ms).toBeGreaterThan(0);
    console.log(`warm-up: ${lines[warmed]!.ms} ms on ${lines[warmed]!.threads} threads`);
  });
});

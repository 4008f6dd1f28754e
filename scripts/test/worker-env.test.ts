/**
 * Every worker process starts the same way, whether the image starts it (Dockerfile, compose,
 * Kubernetes: checked in deploy/test), `npm run worker` does, or the test and benchmark
 * launchers do (WORKER_COMMAND, WORKER_PROCESS_ENV): the memory settings the benchmark figures
 * were measured with, on the built worker.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, WORKER_COMMAND, WORKER_PROCESS_ENV } from '../lib/processes.ts';

describe('worker process command line', () => {
  it('npm run worker runs the production command line with the production environment', () => {
    const scripts = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const env = Object.entries(WORKER_PROCESS_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    // `exec`: npm's child is node itself, so the signals npm forwards reach the worker.
    expect(scripts.worker).toBe(`${env} exec ${WORKER_COMMAND.join(' ')}`);
    for (const name of ['start', 'beton', 'sim:provider', 'sim:bank']) expect(scripts[name], name).toMatch(/^exec node bin\/beton\.mjs /);
  });
});

/**
 * Every worker process starts with the same environment, whether `npm run worker` starts it
 * (the Dockerfile, compose and Kubernetes) or the test and benchmark launchers do
 * (WORKER_PROCESS_ENV): the memory settings the benchmark figures were measured with.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, WORKER_PROCESS_ENV } from '../lib/processes.ts';

describe('worker process environment', () => {
  it('npm run worker sets what the launchers set', () => {
    const script: string = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).scripts.worker;
    const { HEALTH_PORT: _port, NODE_OPTIONS, ...vars } = WORKER_PROCESS_ENV;
    expect(Object.keys(vars).sort()).toEqual(['ESBUILD_WORKER_THREADS', 'MALLOC_ARENA_MAX']);
    for (const [name, value] of Object.entries(vars)) expect(script).toContain(`${name}=${value} `);
    // The script adds its options to the caller's NODE_OPTIONS, as the launchers do.
    expect(NODE_OPTIONS.split(' ')[0]).toBe('--max-semi-space-size=2');
    expect(script).toContain('NODE_OPTIONS="--max-semi-space-size=2 $NODE_OPTIONS"');
  });
});

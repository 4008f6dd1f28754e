/**
 * Child processes of the product (workers, the web server) started by `npm start`, the
 * drill and the end-to-end tests: spawned directly on Node (so signals reach them), their
 * output kept, readiness awaited, and every one of them stopped at the end.
 */
import { repoRoot } from '@beton/db';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export { repoRoot };

export interface Managed {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Last lines of output (stdout and stderr). */
  lines: string[];
  /** Resolves when a line matching `readyWhen` appears; rejects if the process exits first. */
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly running: boolean;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnOptions {
  name: string;
  args: string[];
  env?: Record<string, string | undefined>;
  readyWhen?: RegExp;
  readyTimeoutMs?: number;
  onLine?: (line: string) => void;
  keepLines?: number;
}

const all = new Set<Managed>();

export function spawnNode({ name, args, env = {}, readyWhen, readyTimeoutMs = 60_000, onLine, keepLines = 200 }: SpawnOptions): Managed {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let running = true;
  let markReady!: () => void;
  let failReady!: (e: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  if (!readyWhen) markReady();
  const timer = readyWhen
    ? setTimeout(() => failReady(new Error(`${name} not ready after ${readyTimeoutMs} ms:\n${lines.slice(-20).join('\n')}`)), readyTimeoutMs)
    : undefined;
  timer?.unref();
  const take = (line: string) => {
    lines.push(line);
    if (lines.length > keepLines) lines.shift();
    if (readyWhen?.test(line)) {
      clearTimeout(timer);
      markReady();
    }
    onLine?.(line);
  };
  createInterface({ input: child.stdout }).on('line', take);
  createInterface({ input: child.stderr }).on('line', take);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      running = false;
      clearTimeout(timer);
      failReady(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready:\n${lines.slice(-30).join('\n')}`));
      all.delete(managed);
      resolve({ code, signal });
    });
  });
  ready.catch(() => {});
  const managed: Managed = {
    name,
    child,
    pid: child.pid!,
    lines,
    ready,
    exited,
    get running() {
      return running;
    },
    signal(sig) {
      if (running) child.kill(sig);
    },
    async stop(graceMs = 40_000) {
      if (!running) return exited;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(killer);
      return result;
    },
  };
  all.add(managed);
  return managed;
}

/**
 * How every worker process starts, in production (the Dockerfile's CMD, compose, Kubernetes)
 * and here (`npm start`, the tests, the drill, the benches): `node` on the built worker, with
 * V8's young generation kept small (--max-semi-space-size=2: it otherwise grows to tens of MB
 * on a 24 GiB machine) and, in the environment (the image's ENV), MALLOC_ARENA_MAX=2 (glibc
 * otherwise gives each render thread its own malloc arenas: two render threads, 12,000 slips,
 * 245 → 224 MB). Both, with the render threads' heap bounds (render-pool.ts): bench at 2,500
 * slips, pdf-render 281 → 243 MB, send-email 235 → 193 MB. And MALLOC_MMAP_THRESHOLD_=65536:
 * glibc serves allocations of 64 KB and more (a slip's PDF, its copies between the render
 * thread, the pool and the database driver) from mmap and returns them on free; by default the
 * threshold rises after the first such free (mallopt(3): dynamic adjustment, off once the
 * threshold is set), they come from the main heap and fragment it — 56.5 MB of [heap] at the
 * pdf-render worker's peak. December 4, bench at 5,000 slips and R = 1,000, pdf-render peak:
 * 245.1–255.5 MB in five runs without, 237.3–249.1 MB in three with, CPU per slip unchanged
 * within the runs' noise (20.4 against 20.4–20.6 ms on the two quiet pairs). And
 * --heap-growing-percent=50: V8 grows the old generation to 1.5× what the last full collection
 * left instead of up to 4×, so garbage is collected before it piles up — the scheduler ran 600
 * submit-bank-transfers jobs (500,000 employees) from 66 to 231–252 MB of garbage, 146 MB with
 * it (100: 173 MB; --optimize-for-size 131 MB but 27 CPU ms per slip against 20.5). December 4,
 * bench at 5,000 slips, R = 1,000, two runs: pdf-render 215.6–215.8 MB, send-email 173–174 MB
 * (282–296 without), 20.2–21.4 CPU ms per slip. deploy/test
 * checks that every production manifest starts workers with exactly this command line.
 */
export const WORKER_COMMAND = ['node', '--max-semi-space-size=2', '--heap-growing-percent=50', 'bin/beton.mjs', 'worker'] as const;
export const WORKER_PROCESS_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' } as const;

/** The image's other production command lines (compose, Kubernetes), checked the same way. */
export const MIGRATE_COMMAND = ['node', 'bin/beton.mjs', 'cli', 'migrate'] as const;
export const WEB_COMMAND = ['node', 'node_modules/next/dist/bin/next', 'start', 'apps/web'] as const;
export const SIMULATOR_COMMANDS = { provider: ['node', 'bin/beton.mjs', 'provider-simulator'], bank: ['node', 'bin/beton.mjs', 'bank-simulator'] } as const;

/**
 * Builds dist/ (scripts/build-node.mjs) once per process, unless a parent already did
 * (BETON_BUILT=1: the test suite's global setup, before its files run in parallel).
 */
export function ensureNodeBuild(): void {
  if (process.env.BETON_BUILT === '1') return;
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/build-node.mjs'), '--quiet'], { cwd: repoRoot, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`building dist/ failed:\n${run.stdout}${run.stderr}`);
  process.env.BETON_BUILT = '1';
}

/** The production command line of a worker (WORKER_COMMAND) as its own process, on the built worker. */
export function spawnWorker(options: {
  name?: string;
  queue: string;
  env: Record<string, string | undefined>;
  args?: string[];
  onLine?: (line: string) => void;
  readyTimeoutMs?: number;
}): Managed {
  ensureNodeBuild();
  const [, ...nodeArgs] = WORKER_COMMAND;
  return spawnNode({
    name: options.name ?? `worker-${options.queue}`,
    args: [...nodeArgs, '--queue', options.queue, ...(options.args ?? [])],
    env: { HEALTH_PORT: '0', ...WORKER_PROCESS_ENV, ...options.env },
    readyWhen: /"msg":"worker ready"/,
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
}

/** Stops every process still running (SIGTERM, then SIGKILL). */
export async function stopAll(graceMs = 40_000): Promise<void> {
  await Promise.all([...all].map((m) => m.stop(graceMs)));
}

/** Kills every process at once — for exit handlers. */
export function killAll(): void {
  for (const m of all) m.signal('SIGKILL');
}

/**
 * Child processes of the product (workers, the web server) started by `npm start`, the
 * drill and the end-to-end tests: spawned directly on Node (so signals reach them), their
 * output kept, readiness awaited, and every one of them stopped at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

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
  const timer = readyWhen ? setTimeout(() => failReady(new Error(`${name} not ready after ${readyTimeoutMs} ms:\n${lines.slice(-20).join('\n')}`)), readyTimeoutMs) : undefined;
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
  createInterface({ input: child.stdout! }).on('line', take);
  createInterface({ input: child.stderr! }).on('line', take);
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
 * The environment every worker process starts with (the same as package.json's `worker`
 * script, which the Dockerfile, compose and Kubernetes run). MALLOC_ARENA_MAX=2: glibc
 * otherwise gives each render thread its own malloc arenas (two render threads, 12,000 slips:
 * 245 → 224 MB). --max-semi-space-size=2: V8's young generation otherwise grows to tens of MB
 * on a 24 GiB machine. Both, with the render threads' heap bounds (render-pool.ts): bench at
 * 2,500 slips, pdf-render 281 → 243 MB, send-email 235 → 193 MB. ESBUILD_WORKER_THREADS=0:
 * on a cold start (no tsx transpile cache yet: a new machine, container or checkout) tsx's
 * esbuild would keep a helper thread alive in the process once it transpiled (two render
 * threads, cold: 196 MB and 16 threads against 158–161 MB warm; bench pdf-render peak
 * 254.2–255.2 MB cold against 225.7–242.2 warm); with 0 each transpile runs esbuild as a
 * short child process instead: 164 MB cold, startup 3.5 s against 3.3 s warm.
 */
export const WORKER_PROCESS_ENV = {
  HEALTH_PORT: '0',
  MALLOC_ARENA_MAX: '2',
  ESBUILD_WORKER_THREADS: '0',
  // Added to the caller's NODE_OPTIONS, not in place of them (as `npm run worker` does).
  NODE_OPTIONS: ['--max-semi-space-size=2', process.env.NODE_OPTIONS].filter(Boolean).join(' '),
} as const;

/** `beton-worker --queue <queue>` as its own process. */
export function spawnWorker(options: {
  name?: string;
  queue: string;
  env: Record<string, string | undefined>;
  args?: string[];
  onLine?: (line: string) => void;
  readyTimeoutMs?: number;
}): Managed {
  return spawnNode({
    name: options.name ?? `worker-${options.queue}`,
    args: ['--import', 'tsx', path.join(repoRoot, 'apps/worker/src/main.ts'), '--queue', options.queue, ...(options.args ?? [])],
    env: { ...WORKER_PROCESS_ENV, ...options.env },
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

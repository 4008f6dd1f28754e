import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from '@beton/db';
import { countWakeups } from '../src/wakeups.ts';

/** Every child a test file started; `killAll()` (afterAll) SIGKILLs the ones still alive. */
const children = new Set<ChildProcess>();

export const fixturePath = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export interface Spawned {
  child: ChildProcess;
  pid: number;
  /** Resolves with the parsed JSON line whose msg is `readyMsg`. */
  ready: Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  stdout(): string;
  stderr(): string;
  kill(signal?: NodeJS.Signals): void;
}

/** Spawns `node --import tsx file` (signals reach the script itself, not a wrapper). */
export function spawnScript(
  file: string,
  options: { env?: Record<string, string>; args?: string[]; readyMsg?: string; ipc?: boolean; cwd?: string } = {},
): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  children.add(child);
  let out = '';
  let err = '';
  const readyMsg = options.readyMsg ?? 'fixture ready';
  let onReady!: (v: Record<string, unknown>) => void;
  let onFail!: (e: Error) => void;
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => ((onReady = resolve), (onFail = reject)));
  ready.catch(() => {});
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        const parsed = JSON.parse(line);
        if (parsed?.msg === readyMsg) onReady(parsed);
      } catch {
        // not JSON: ignore
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      onFail(new Error(`process exited (code ${code}, signal ${signal}) before ready; stderr:\n${err}`));
      resolve({ code, signal, at: performance.now() });
    });
  });
  return {
    child,
    pid: child.pid!,
    ready,
    exit,
    stdout: () => out,
    stderr: () => err,
    kill: (signal = 'SIGTERM') => void child.kill(signal),
  };
}

/** The fixture worker process (fixtures/worker-process.ts) on the given database. */
export function spawnWorker(databaseUrl: string, env: Record<string, string> = {}): Spawned {
  return spawnScript(fixturePath('worker-process.ts'), { env: { DATABASE_URL: databaseUrl, ...env } });
}

export async function killAll(): Promise<void> {
  const alive = [...children];
  for (const child of alive) child.kill('SIGKILL');
  await Promise.all(alive.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once('exit', r)))));
}

/** The table where the fixture records each test-sleep execution. */
export async function createRunsTable(pool: Pool): Promise<void> {
  await pool.query(`create table if not exists test_runs (
    id serial primary key, key text not null, job_id bigint not null, attempt int not null, worker_id text not null, pid int not null,
    started_at timestamptz not null default clock_timestamp(), finished_at timestamptz, outcome text)`);
}

/** graphile-worker rows still locked (a locked row of a dead worker waits 4 h for graphile's own sweep). */
export async function lockedGraphileJobs(pool: Pool): Promise<number> {
  return countWakeups(pool, { locked: true });
}

/** CPU time (user + system) a process has used, ms (Linux /proc). */
export async function cpuTimeMs(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11], fields[12] = utime, stime (in clock ticks; 100 a second on Linux)
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** CPU time (user + system) of each thread of a process, ms, by thread id (Linux /proc). */
export async function threadCpuMs(pid: number): Promise<Map<number, number>> {
  const { readdir, readFile } = await import('node:fs/promises');
  const out = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
  }
  return out;
}

/** The thread of `pid`, other than its main thread, that used the most CPU over `ms` (a spinning worker thread). */
export async function busiestThread(pid: number, ms: number): Promise<{ tid: number; cpuMs: number }> {
  const before = await threadCpuMs(pid);
  await new Promise((r) => setTimeout(r, ms));
  const after = await threadCpuMs(pid);
  let best = { tid: -1, cpuMs: -1 };
  for (const [tid, cpu] of after) {
    if (tid === pid) continue; // the main thread
    const used = cpu - (before.get(tid) ?? cpu);
    if (used > best.cpuMs) best = { tid, cpuMs: used };
  }
  return best;
}

export async function threadAlive(pid: number, tid: number): Promise<boolean> {
  const { access } = await import('node:fs/promises');
  return access(`/proc/${pid}/task/${tid}`).then(
    () => true,
    () => false,
  );
}

export interface FakeProvider {
  url: string;
  /** Arrival times (performance.now()) of every request. */
  arrivals: number[];
  /** When each request was started by its sender (epoch ms, the `x-started-at` header). */
  starts: number[];
  maxInFlight: number;
  readonly inFlight: number;
  close(): Promise<void>;
}

/** A small provider: answers 202 after `latencyMs`, counting requests in flight. */
export async function startFakeProvider(latencyMs: number): Promise<FakeProvider> {
  let inFlight = 0;
  const state = {
    arrivals: [] as number[],
    starts: [] as number[],
    maxInFlight: 0,
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    state.arrivals.push(performance.now());
    const started = Number(req.headers['x-started-at']);
    if (Number.isFinite(started)) state.starts.push(started);
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    req.resume();
    setTimeout(() => {
      inFlight--;
      res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
    }, latencyMs);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v3/mail/send`,
    get arrivals() {
      return state.arrivals;
    },
    get starts() {
      return state.starts;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    get inFlight() {
      return inFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How many of the instants (epoch ms) fall in each second of the clock, earliest second first. */
export function countPerClockSecond(epochMs: number[]): number[] {
  const counts = new Map<number, number>();
  for (const t of epochMs) counts.set(Math.floor(t / 1000), (counts.get(Math.floor(t / 1000)) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n);
}

/** The most arrivals in any window [t, t + windowMs) — checked at every arrival (where a maximum starts). */
export function maxInAnyWindow(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

export async function redisReachable(url = 'redis://127.0.0.1:6379'): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 500, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

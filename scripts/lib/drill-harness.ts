/**
 * Shared by the drill (`npm run drill`) and the end-to-end bench (`npm run bench`): a fresh
 * migrated database of their own, cleanup on every way out (Ctrl-C included), samplers for
 * worker DB connections and worker memory, and small helpers.
 */
import { createDatabaseIfMissing, createPool, dropDatabase, freePort, migrateDatabase, startEmbeddedPostgres, withDatabase, type Pool } from '@beton/db';
import { migrateQueue } from '@beton/jobs';
import { readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { killAll, repoRoot, spawnWorker, stopAll, type Managed } from './processes.ts';
import { waitFor } from '../test/wait-for.ts';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface FreshDatabase {
  url: string;
  /** The script's own pool (application_name 'beton-drill', not counted as a worker's). */
  pool: Pool;
  where: string;
  /** The embedded server stopped (fast shutdown) and started again after `downMs`; absent on a DATABASE_URL server. */
  restart?: (downMs: number) => Promise<void>;
  /** The embedded server crashed (immediate shutdown: WAL not yet flushed is lost) and started again; absent on a DATABASE_URL server. */
  crash?: () => Promise<void>;
  /** The embedded server's log file (jsonlog), when asked for with `logFile`. */
  logFile?: string;
  drop(): Promise<void>;
}

/**
 * A database nobody else uses: with DATABASE_URL a new database on that server (dropped at
 * the end); otherwise an embedded PostgreSQL in a throwaway folder `.beton/<label>-<pid>`.
 */
export async function freshDatabase(
  label: string,
  options: { fast?: boolean; keep?: boolean; settings?: Record<string, string>; log?: (s: string) => void; logFile?: boolean } = {},
): Promise<FreshDatabase> {
  const name = `beton_${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  let serverUrl: string;
  let stopServer = async () => {};
  let restart: ((downMs: number) => Promise<void>) | undefined;
  let crash: (() => Promise<void>) | undefined;
  let where: string;
  let logFile: string | undefined;
  if (process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL;
    where = `database ${name} on the DATABASE_URL server`;
  } else {
    const dir = path.join(repoRoot, `.beton/${label}-${process.pid}`);
    const server = await startEmbeddedPostgres({
      dir,
      persistent: false,
      fast: options.fast ?? false,
      port: await freePort(),
      ...(options.settings ? { settings: options.settings } : {}),
      ...(options.logFile ? { logFile: true } : {}),
    });
    logFile = server.logFile;
    serverUrl = server.serverUrl;
    where = `embedded PostgreSQL in ${path.relative(repoRoot, dir)} (port ${server.port}${options.fast ? ', fsync off' : ''})`;
    restart = (downMs) => server.restart({ downMs });
    crash = () => server.crash();
    stopServer = async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.port`, { force: true });
    };
  }
  try {
    await createDatabaseIfMissing(serverUrl, name);
  } catch (error) {
    await stopServer();
    throw error;
  }
  const url = withDatabase(serverUrl, name);
  await migrateDatabase(url);
  const pool = createPool({ url, max: 4, applicationName: `beton-${label}` });
  await migrateQueue(pool);
  let dropped = false;
  return {
    url,
    pool,
    where,
    ...(restart ? { restart } : {}),
    ...(crash ? { crash } : {}),
    ...(logFile ? { logFile } : {}),
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => {});
      if (!options.keep) await dropDatabase(serverUrl, name).catch(() => {});
      await stopServer();
    },
  };
}

/** Cleanups run once, in reverse order, on normal exit, failure, Ctrl-C or SIGTERM; `beforeStop` first (e.g. stop replacing exited processes). */
export function exitHandling(say: (s: string) => void, beforeStop: () => void = () => {}) {
  const cleanups: Array<() => Promise<unknown>> = [];
  let finishing: Promise<void> | undefined;
  const finish = (code: number): Promise<void> => {
    finishing ??= (async () => {
      beforeStop();
      await stopAll(5_000).catch(() => {});
      for (const fn of cleanups.reverse()) await fn().catch(() => {});
      process.exitCode = code;
    })();
    return finishing;
  };
  const onSignal = (sig: NodeJS.Signals) => {
    say(`\n${sig}: stopping every process this script started…`);
    void finish(130).then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAll);
  return {
    add(fn: () => Promise<unknown>) {
      cleanups.push(fn);
    },
    finish,
  };
}

/** Samples the connections the worker processes (application_name beton-worker*) hold on this database (others on the same server, e.g. a parallel test's, are not counted). */
export function sampleWorkerConnections(pool: Pool, everyMs = 500) {
  let max = 0;
  let samples = 0;
  let last = 0;
  const timer = setInterval(() => {
    pool
      .query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'beton-worker%'`)
      .then(({ rows }) => {
        last = rows[0]!.n;
        max = Math.max(max, last);
        samples++;
      })
      .catch(() => {});
  }, everyMs);
  return {
    get max() {
      return max;
    },
    get last() {
      return last;
    },
    get samples() {
      return samples;
    },
    stop: () => clearInterval(timer),
  };
}

/** Resident memory of a process (VmRSS from /proc), MiB; undefined once it is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Peak RSS per process name, sampled every `everyMs` for the processes `list()` returns. */
export function sampleRss(list: () => Array<{ name: string; pid: number }>, everyMs = 500) {
  const peak = new Map<string, number>();
  const timer = setInterval(() => {
    for (const p of list()) {
      const mb = rssMb(p.pid);
      if (mb !== undefined) peak.set(p.name, Math.max(peak.get(p.name) ?? 0, mb));
    }
  }, everyMs);
  return { peak, stop: () => clearInterval(timer) };
}

/** waitFor (scripts/test/wait-for.ts) polling every 250 ms: a drill's checks read bigger tables. */
export function waitUntil<T>(what: string, fn: () => Promise<T | false | null | undefined>, timeoutMs: number, everyMs = 250): Promise<T> {
  return waitFor(what, fn, timeoutMs, everyMs);
}

/** The workerId a worker printed in its "worker ready" line. */
export function readyWorkerId(lines: string[]): string | undefined {
  for (const line of lines) {
    if (!line.includes('"worker ready"')) continue;
    try {
      return String((JSON.parse(line) as { workerId: string }).workerId);
    } catch {
      /* not JSON */
    }
  }
  return undefined;
}

export function bar(done: number, total: number, width = 28): string {
  const f = total > 0 ? Math.min(1, done / total) : 0;
  const full = Math.round(f * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${String(Math.round(f * 100)).padStart(3)}%`;
}

export const median = (xs: number[]) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The 95th percentile (the value at or below which 95 % of `xs` fall; NaN for none). */
export const p95 = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!);

export const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** processes.ts's spawnWorker with a longer readiness wait (a busy 2-core machine). */
export function spawnWorkerSlowStart(options: {
  name: string;
  queue: string;
  env: NodeJS.ProcessEnv;
  onLine?: (line: string) => void;
  readyTimeoutMs?: number;
}): Managed {
  return spawnWorker({ ...options, readyTimeoutMs: options.readyTimeoutMs ?? 240_000 });
}

/**
 * The story of some jobs, one line per attempt (times in seconds after `since`) and one per
 * wake-up of a job still waiting — what a drill prints for a late resend and a test for a round
 * that did not settle. `where` is a condition on the job `j` over `params` (numbered from $2).
 */
export async function jobStory(pool: Pool, where: string, params: unknown[], since: Date): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `select line from (
       select j.id, a.started_at as at, format('job %s %s (priority %s, now %s, wake-up #%s): attempt %s on %s %s–%s s %s%s', j.id, j.task_name, j.priority, j.status, j.wakeup_seq,
              a.attempt, coalesce(a.worker_id, '?'), round(extract(epoch from a.started_at - $1::timestamptz)::numeric, 1),
              coalesce(round(extract(epoch from a.finished_at - $1::timestamptz)::numeric, 1)::text, '…'), a.outcome,
              coalesce(' ' || a.error_kind || ': ' || left(a.error_message, 120) || coalesce(', retry in ' || a.retry_delay_ms || ' ms', ''), '')) as line
       from jobs j join job_attempts a on a.job_id = j.id where ${where}
       union all
       select j.id, null, format('job %s %s (now %s, wake-up #%s): %s', j.id, j.task_name, j.status, j.wakeup_seq,
              coalesce(string_agg(format('wake-up #%s due %s s, locked %s by %s, %s/%s tries', w.payload->>'seq', round(extract(epoch from w.run_at - $1::timestamptz)::numeric, 1),
                                         coalesce(round(extract(epoch from w.locked_at - $1::timestamptz)::numeric, 1)::text, '-'), coalesce(w.locked_by, '-'), w.attempts, w.max_attempts), '; ') filter (where w.id is not null),
                       'NO wake-up'))
       from jobs j left join graphile_worker._private_jobs w on (w.payload->>'jobId')::bigint = j.id
       where (${where}) and j.status in ('queued', 'retrying') group by j.id
     ) s order by id, at nulls last`,
    [since, ...params],
  );
  return rows.map((r) => r.line);
}

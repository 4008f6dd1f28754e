/**
 * CPU time of the product's own processes, read from Linux's /proc (user + system, in clock
 * ticks of 1/CLK_TCK s): a process's `utime + stime`, plus `cutime + cstime` (what its exited
 * and reaped children used: a PostgreSQL backend that disconnects is reaped by the postmaster,
 * so the postmaster's tree keeps its time), summed over the process and its living descendants.
 * Used by the end-to-end bench (`npm run bench`) to split CPU milliseconds per slip by process
 * kind; the benches run on Linux (the only platform the product's images run on).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Pool } from '@beton/db';

/**
 * Clock ticks per second of /proc's times: USER_HZ, which Linux fixes at 100 in its user ABI on
 * every architecture we run (x86-64, arm64), whatever the kernel's internal HZ. No system tool
 * (getconf) is started: only Node and npm (scripts/test/system-tools.test.ts).
 */
const CLOCK_TICKS = 100;

export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime of the process itself, ms. */
  selfMs: number;
  /** cutime + cstime: its reaped children's, ms. */
  childrenMs: number;
}

/** /proc/<pid>/stat, or undefined when the process is gone (or this is not Linux). */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  const ms = (i: number) => (Number(f[i]) * 1000) / CLOCK_TICKS;
  // f[0] = state (field 3), f[1] = ppid (4), f[11..14] = utime, stime, cutime, cstime (14..17).
  return { pid, ppid: Number(f[1]), comm, selfMs: ms(11) + ms(12), childrenMs: ms(13) + ms(14) };
}

/** Every process on the machine: pid → parent pid. */
function parentMap(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name));
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(s.pid);
    children.set(s.ppid, list);
  }
  return children;
}

/** The direct children of `pid` (e.g. the processes this script spawned). */
export function childPids(pid: number): number[] {
  return parentMap().get(pid) ?? [];
}

/** CPU ms of a process and all its living descendants, each with its reaped children's. */
export function treeCpuMs(root: number, children = parentMap()): number | undefined {
  const top = procStat(root);
  if (!top) return undefined;
  let total = top.selfMs + top.childrenMs;
  const stack = [...(children.get(root) ?? [])];
  while (stack.length) {
    const pid = stack.pop()!;
    const s = procStat(pid);
    if (!s) continue;
    total += s.selfMs + s.childrenMs;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** The PostgreSQL server's postmaster pid when it runs on this machine (a backend's parent), else undefined. */
export async function localPostmaster(pool: Pool): Promise<number | undefined> {
  const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
  const backend = procStat(rows[0]!.pid);
  if (!backend) return undefined; // not on this machine (or another PID namespace)
  const parent = procStat(backend.ppid);
  return parent && /postgres|postmaster/.test(parent.comm) ? parent.pid : undefined;
}

/** What a PostgreSQL server process does, from its process title ("postgres: walwriter", "postgres: user db [local] idle"). */
export const POSTGRES_ROLES = ['backends', 'autovacuum', 'server'] as const;
export type PostgresRole = (typeof POSTGRES_ROLES)[number];
// The server's own processes as PostgreSQL 15–18 title them (`ps` on the embedded 18.4 and the
// system 15: "postgres: io worker 0", "postgres: 15/main: checkpointer" with a cluster_name).
const SERVER_PROCESS =
  /^postgres: (?:[^:]+: )?(checkpointer|background writer|walwriter|walsummarizer|io worker|logical replication|slotsync worker|archiver|startup|walreceiver|walsender|stats)/;

/** The role of one server process, from its title (`/proc/<pid>/cmdline`). */
export function postgresRole(title: string): PostgresRole {
  return /^postgres: (?:[^:]+: )?autovacuum/.test(title) ? 'autovacuum' : SERVER_PROCESS.test(title) ? 'server' : 'backends';
}

/**
 * The postmaster's living children by role: client backends (the statements), autovacuum (its
 * launcher and the workers alive at the sample), the server's own writers and I/O workers. What
 * a child used before it exited (an autovacuum worker's pass, a closed connection) counts in the
 * postmaster's own reaped-children time, with none of these.
 */
export function postgresChildren(postmaster: number): Array<{ pid: number; role: PostgresRole }> {
  return childPids(postmaster).flatMap((pid) => {
    let title: string;
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      return [];
    }
    return [{ pid, role: postgresRole(title) }];
  });
}

export interface CpuKind {
  kind: string;
  /** Root pids whose whole process tree counts for this kind. */
  pids: number[];
}

/**
 * Samples CPU time per process kind: `start()` and `stop()` bracket the run; the result is
 * the difference, ms per kind. A kind's process that exits between the two loses what it used
 * after its last sample (samples every `everyMs` keep that small).
 */
export function cpuMeter(kinds: () => CpuKind[], everyMs = 1000) {
  const first = new Map<string, number>(); // "kind pid" → ms at its first sample
  const last = new Map<string, number>();
  const sample = () => {
    const children = parentMap();
    for (const k of kinds()) {
      for (const pid of k.pids) {
        const ms = treeCpuMs(pid, children);
        if (ms === undefined) continue;
        const id = `${k.kind} ${pid}`;
        if (!first.has(id)) first.set(id, ms);
        last.set(id, ms);
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      sample();
      timer = setInterval(sample, everyMs);
      timer.unref();
    },
    /** Last sample now; CPU ms per kind since start (a pid first seen later counts from its first sample). */
    stop(): Map<string, number> {
      clearInterval(timer);
      sample();
      const out = new Map<string, number>();
      for (const [id, ms] of last) {
        const kind = id.slice(0, id.lastIndexOf(' '));
        out.set(kind, (out.get(kind) ?? 0) + ms - first.get(id)!);
      }
      return out;
    },
  };
}

/**
 * The PostgreSQL backends serving one database on a shared local server (DATABASE_URL): their
 * pids from pg_stat_activity, sampled every `everyMs` — each backend counts from the first
 * sample that saw it (its earlier time, e.g. a pooled connection's, is not this run's) to the
 * last. The server's shared processes (checkpointer, WAL writer) are not counted here.
 */
export function backendPids(pool: Pool, everyMs = 1000) {
  const pids = new Set<number>();
  const poll = () =>
    pool
      .query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database()`)
      .then(({ rows }) => rows.forEach((r) => pids.add(r.pid)))
      .catch(() => {});
  void poll();
  const timer = setInterval(() => void poll(), everyMs);
  timer.unref();
  return { pids: () => [...pids], stop: () => clearInterval(timer) };
}

/** The whole machine's busy CPU time (every core, every process), ms, from /proc/stat. */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [, ...f] = line.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal …: busy = all but idle and iowait (guest is inside user).
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return ((total - f[3]! - f[4]!) * 1000) / CLOCK_TICKS;
}

/** Above this many cores used by other processes during a run, the bench says the machine was LOADED. */
export const LOADED_ABOVE_CORES = 0.2;

/**
 * The cores other processes used during a run (other users' work, not the product's nor the
 * harness's), and whether that makes the run a loaded machine's. Decided from that measured CPU
 * alone: the load average counts the product's own runnable threads (a busy bench on 2 cores
 * has a load average above 3 by itself), so it is reported, not used.
 */
export function otherWork(run: { machineMs: number; productMs: number; harnessMs: number; runMs: number }): { othersCores: number; loaded: boolean } {
  const othersCores = Math.max(0, (run.machineMs - run.productMs - run.harnessMs) / run.runMs);
  return { othersCores, loaded: othersCores > LOADED_ABOVE_CORES };
}

import { Cron } from 'croner';
import type { AnyJobDefinition } from './definition.ts';
import { inTransaction, type Pool, type PoolClient } from './db.ts';
import type { EnqueuedJob, EnqueueOptions } from './enqueue.ts';
import { coerceError } from './errors.ts';

/**
 * Time-zone-aware schedules (R1) on top of graphile-worker's UTC cron: a once-a-minute
 * tick (de-duplicated across schedulers by graphile-worker's known_crontabs) asks every
 * schedule which due times fell in the last few minutes and enqueues each once — the
 * `schedule_runs` row per (schedule, due time) and the job's idempotency key make a tick
 * that runs twice enqueue once.
 */
export interface ScheduleEntry {
  /** Stable id, e.g. 'sweep-stuck-jobs' or 'payroll:<companyId>'. */
  id: string;
  cron: string;
  timeZone: string;
  job: string;
  payload: (dueAt: Date) => unknown;
  idempotencyKey?: (dueAt: Date) => string;
}

export type ScheduleSource = (client: PoolClient) => Promise<ScheduleEntry[]>;

export class InvalidScheduleError extends Error {
  override readonly name = 'InvalidScheduleError';
}

export function parseSchedule(cron: string, timeZone: string): Cron {
  try {
    new Intl.DateTimeFormat('en', { timeZone }); // throws RangeError for an unknown zone
    return new Cron(cron, { timezone: timeZone, paused: true });
  } catch (error) {
    throw new InvalidScheduleError(`Invalid schedule "${cron}" in ${timeZone}: ${(error as Error).message}`);
  }
}

/** Due times of `cron` in `timeZone` within (from, to]. */
export function dueTimes(cron: string, timeZone: string, from: Date, to: Date): Date[] {
  const schedule = parseSchedule(cron, timeZone);
  const out: Date[] = [];
  let cursor = from;
  for (;;) {
    const next = schedule.nextRun(cursor);
    if (!next || next > to) break;
    out.push(next);
    cursor = next;
  }
  return out;
}

/** The next `count` due times after `after` (the admin schedules page). */
export function nextDueTimes(cron: string, timeZone: string, count: number, after = new Date()): Date[] {
  return parseSchedule(cron, timeZone).nextRuns(count, after);
}

/** Schedules declared on job definitions (the built-in recurring jobs). */
export function definitionSchedules(definitions: readonly AnyJobDefinition[]): ScheduleEntry[] {
  return definitions.flatMap((def) =>
    def.schedule
      ? [
          {
            id: def.name,
            cron: def.schedule.cron,
            timeZone: def.schedule.timeZone ?? 'UTC',
            job: def.name,
            payload: (dueAt: Date) => def.schedule!.payload(dueAt.toISOString()),
          },
        ]
      : [],
  );
}

/**
 * A scheduler records on its `workers` row the built-in schedules it runs ({id: cron}) and its
 * sweeper's stale-heartbeat threshold, so the admin's pages show the crons in force (SWEEP_CRON,
 * BANK_POLL_CRON) and call a worker silent by the sweeper's own measure.
 */
export async function recordSchedulerSettings(
  pool: Pool,
  workerId: string,
  settings: { schedules: readonly ScheduleEntry[]; staleHeartbeatMs: number; stuckRunningMs?: number },
): Promise<void> {
  await pool.query(`update workers set schedules = $2, stale_heartbeat_ms = $3, stuck_running_ms = $4 where id = $1`, [
    workerId,
    JSON.stringify(Object.fromEntries(settings.schedules.map((e) => [e.id, e.cron]))),
    settings.staleHeartbeatMs,
    settings.stuckRunningMs ?? null,
  ]);
}

/** The built-in schedules' crons as the most recently seen live scheduler runs them; {} when none reported. */
export async function runningScheduleCrons(pool: Pool): Promise<{ crons: Record<string, string>; workerId: string | null }> {
  const { rows } = await pool.query<{ id: string; schedules: Record<string, string> }>(
    `select id, schedules from workers where schedules is not null and stopped_at is null order by last_seen desc limit 1`,
  );
  return { crons: rows[0]?.schedules ?? {}, workerId: rows[0]?.id ?? null };
}

export interface TickOptions {
  pool: Pool;
  /** Any job client; schedules name their job at run time (checked by the registry then). */
  jobs: { enqueueByName(name: string, payload: unknown, options?: EnqueueOptions): Promise<EnqueuedJob> };
  sources: ScheduleSource[];
  /** The tick's time. Default: now (tests inject a clock). */
  now?: Date;
  /** How far back a tick looks for due times it may have missed. Default: 5 min. */
  lookbackMs?: number;
  /** Who enqueued (diagnostics). */
  by: string;
}

export interface TickResult {
  enqueued: Array<{ scheduleId: string; dueAt: Date; jobId: number }>;
  /** Due times of this tick that another scheduler (`by`) had already enqueued: skipped. */
  taken: Array<{ scheduleId: string; dueAt: Date; by: string }>;
  /**
   * Schedules (or a source of them) that could not be read or enqueued this tick — a malformed
   * cron, a payload that throws, the database: the others went on, and the next tick tries these
   * again while their due times are within the lookback. `dueAt` is absent when the schedule's
   * due times could not even be computed.
   */
  failed: Array<{ scheduleId: string; dueAt?: Date; error: Error }>;
}

export async function runScheduleTick({ pool, jobs, sources, now = new Date(), lookbackMs = 5 * 60_000, by }: TickOptions): Promise<TickResult> {
  const from = new Date(now.getTime() - lookbackMs);
  const enqueued: TickResult['enqueued'] = [];
  const taken: TickResult['taken'] = [];
  const failed: TickResult['failed'] = [];
  // One schedule that cannot be read or enqueued (a company's malformed cron, say) does not hold
  // back the others: each source and each due time on its own, failures reported.
  const read = await Promise.allSettled(sources.map((source) => inTransaction(pool, undefined, source)));
  const entries = read.flatMap((r, i) => {
    if (r.status === 'fulfilled') return r.value;
    failed.push({ scheduleId: `source ${i + 1}`, error: coerceError(r.reason) });
    return [];
  });
  for (const entry of entries) {
    let due: Date[];
    try {
      due = dueTimes(entry.cron, entry.timeZone, from, now);
    } catch (error) {
      failed.push({ scheduleId: entry.id, error: coerceError(error) });
      continue;
    }
    for (const dueAt of due) {
      await inTransaction(pool, undefined, async (client) => {
        const { rowCount } = await client.query(`insert into schedule_runs (schedule_id, due_at, enqueued_by) values ($1, $2, $3) on conflict do nothing`, [
          entry.id,
          dueAt,
          by,
        ]);
        if (!rowCount) {
          // Another tick (or another scheduler) already enqueued this due time: say whose.
          const holder = await client.query<{ enqueued_by: string }>('select enqueued_by from schedule_runs where schedule_id = $1 and due_at = $2', [
            entry.id,
            dueAt,
          ]);
          const other = holder.rows[0]?.enqueued_by;
          if (other !== undefined && other !== by) taken.push({ scheduleId: entry.id, dueAt, by: other });
          return;
        }
        const job = await jobs.enqueueByName(entry.job, entry.payload(dueAt), {
          client,
          idempotencyKey: entry.idempotencyKey?.(dueAt) ?? `schedule:${entry.id}:${dueAt.toISOString()}`,
        });
        enqueued.push({ scheduleId: entry.id, dueAt, jobId: job.id });
      }).catch((error: unknown) => failed.push({ scheduleId: entry.id, dueAt, error: coerceError(error) }));
    }
  }
  return { enqueued, taken, failed };
}

/**
 * Keeps, of a tick's items, those not seen by an earlier tick — a tick looks back over the
 * same due times for minutes, so a scheduler reports each due time it lost to another once.
 * Forgets due times older than `forgetAfterMs`.
 */
export function firstSeenDueTimes(forgetAfterMs: number): <T extends { scheduleId: string; dueAt: Date }>(items: T[], now?: Date) => T[] {
  const seen = new Map<string, number>();
  return (items, now = new Date()) => {
    for (const [key, dueMs] of seen) if (dueMs < now.getTime() - forgetAfterMs) seen.delete(key);
    return items.filter((item) => {
      const key = `${item.scheduleId}@${item.dueAt.toISOString()}`;
      if (seen.has(key)) return false;
      seen.set(key, item.dueAt.getTime());
      return true;
    });
  };
}

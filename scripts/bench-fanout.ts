/**
 * `npm run bench:fanout -- [--employees 50000] [--companies 60] [--parallel 2] [--profile] [--json]`
 *
 * The monthly fan-out on a fresh database: seed N employees over the companies (target for
 * 50,000: < 15 s), then time `runPayroll` for one month — every company's payroll_runs row
 * and one render-slip job per employee (jobs row + graphile wake-up), target <= 5 s for
 * 50,000 — and verify the counts. When the fan-out misses its target (or with --profile) it
 * prints which SQL statements the time went to.
 */
import { createPool, seedDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock } from '@beton/jobs';
import { FANOUT_PARALLEL, runPayroll } from '@beton/payroll';
import { parseArgs } from 'node:util';
import { installSqlProfile } from './lib/sql-profile.ts';
import { openScratchDatabase } from '../apps/worker/src/cli/database.ts';
import { countWakeups } from '@beton/jobs/wakeups';
import { localPostmaster, treeCpuMs } from './lib/cpu.ts';

const { values } = parseArgs({
  options: {
    employees: { type: 'string', default: '50000' },
    companies: { type: 'string', default: '60' },
    parallel: { type: 'string', default: String(FANOUT_PARALLEL) },
    month: { type: 'string', default: '2026-11' },
    profile: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(`Usage: npm run bench:fanout -- [--employees 50000] [--companies 60] [--parallel ${FANOUT_PARALLEL}] [--month 2026-11] [--profile] [--json]`);
  process.exit(0);
}
const N = Number(values.employees);
const COMPANIES = Number(values.companies);
const PARALLEL = Number(values.parallel);
for (const [name, v] of [
  ['employees', N],
  ['companies', COMPANIES],
  ['parallel', PARALLEL],
] as const) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`bench:fanout: --${name} must be a whole number >= 1`);
    process.exit(2);
  }
}
const SEED_TARGET_S = 15 * (N / 50_000);
const FANOUT_TARGET_S = 5 * (N / 50_000);
const log = (line: string) => process.stderr.write(`${line}\n`);
const fmt = (n: number) => n.toLocaleString('en-US');

// Every statement of the fan-out, grouped, with its total time.
const sql = installSqlProfile();

async function main() {
  const db = await openScratchDatabase('fanout', { log });
  // One connection per lane (a company's transaction) and one for the lock and the checks.
  const pool = createPool({ url: db.url, max: PARALLEL + 1, applicationName: 'bench-fanout' });
  try {
    log(`Seeding ${fmt(N)} employees over ${COMPANIES} companies…`);
    const seeded = await seedDatabase(pool, { employees: N, companies: COMPANIES, invalidRate: 0.01 });
    const seedSeconds = seeded.ms / 1000;
    log(`  seeded in ${seedSeconds.toFixed(2)} s`);
    // Fresh statistics, as autovacuum would have them by 02:00 on the 1st.
    await pool.query('analyze');

    log(`Fan-out: runPayroll(${values.month}) for ${COMPANIES} companies, ${PARALLEL} at a time…`);
    const deps = { pool, jobs: createJobClient(pool, jobDefinitions), lock: new PostgresLock(pool), by: 'bench-fanout' };
    // CPU over the fan-out, less noisy than its wall time on a shared VM: the PostgreSQL server
    // (every backend, autovacuum and the server's own processes) and this process.
    const postmaster = await localPostmaster(pool);
    const cpuBefore = { postgres: postmaster === undefined ? undefined : treeCpuMs(postmaster), node: process.cpuUsage() };
    const started = performance.now();
    let lastLog = 0;
    sql.on();
    const summary = await runPayroll(deps, values.month, {
      parallel: PARALLEL,
      onProgress: (done, total) => {
        const now = performance.now();
        if (now - lastLog > 500 || done === total) {
          lastLog = now;
          log(`  [${done}/${total}] companies · ${((now - started) / 1000).toFixed(2)} s`);
        }
      },
    });
    sql.off();
    const fanoutSeconds = (performance.now() - started) / 1000;
    const pgAfter = postmaster === undefined ? undefined : treeCpuMs(postmaster);
    const nodeCpu = process.cpuUsage(cpuBefore.node);
    const perJobUs = (ms: number) => Number(((1000 * ms) / N).toFixed(1));
    const cpuUsPerJob = {
      postgres: cpuBefore.postgres === undefined || pgAfter === undefined ? null : perJobUs(pgAfter - cpuBefore.postgres),
      node: perJobUs((nodeCpu.user + nodeCpu.system) / 1000),
    };

    const counts = {
      ...(
        await pool.query<{ jobs: number; runs: number }>(
          `select (select count(*)::int from jobs where task_name = 'render-slip' and status = 'queued') as jobs,
                (select count(*)::int from payroll_runs where month = $1) as runs`,
          [values.month],
        )
      ).rows[0]!,
      wakeups: await countWakeups(pool, { task: 'render-slip' }),
    };
    const ok = counts.jobs === N && counts.wakeups === N && counts.runs === COMPANIES && summary.enqueued === N;

    console.log('');
    console.log(`bench:fanout — ${fmt(N)} employees, ${COMPANIES} companies, fresh database`);
    console.log(
      `seed     ${seedSeconds.toFixed(2).padStart(6)} s  (target < ${SEED_TARGET_S.toFixed(0)} s: ${seedSeconds < SEED_TARGET_S ? 'met' : 'MISSED'})`,
    );
    console.log(
      `fan-out  ${fanoutSeconds.toFixed(2).padStart(6)} s  (target <= ${FANOUT_TARGET_S.toFixed(1)} s: ${fanoutSeconds <= FANOUT_TARGET_S ? 'met' : 'MISSED'}) — ` +
        `${fmt(Math.round(N / fanoutSeconds))} jobs/s, ${PARALLEL} companies at a time`,
    );
    console.log(
      `CPU      ${cpuUsPerJob.postgres ?? '?'} µs a job in PostgreSQL (all its processes), ${cpuUsPerJob.node} µs in this process` +
        (postmaster === undefined ? ' (the server is not on this machine: its CPU is not read)' : ''),
    );
    console.log(
      `verified ${fmt(counts.jobs)} jobs rows queued, ${fmt(counts.wakeups)} graphile wake-ups, ${counts.runs} payroll_runs: ${ok ? 'OK' : 'MISMATCH'}`,
    );
    if (values.profile || fanoutSeconds > FANOUT_TARGET_S) {
      const entries = [...sql.stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
      const total = entries.reduce((n, [, s]) => n + s.ms, 0);
      console.log('');
      console.log(`Where the fan-out's time goes (statement time summed over ${PARALLEL} lanes, ${(total / 1000).toFixed(2)} s):`);
      console.log(`${'calls'.padStart(6)} ${'total s'.padStart(8)} ${'share'.padStart(6)} ${'mean ms'.padStart(8)}  statement`);
      for (const [sql, s] of entries.slice(0, 10)) {
        console.log(
          `${fmt(s.calls).padStart(6)} ${(s.ms / 1000).toFixed(2).padStart(8)} ${`${Math.round((100 * s.ms) / total)}%`.padStart(6)} ${(s.ms / s.calls).toFixed(1).padStart(8)}  ${sql}`,
        );
      }
    }
    if (values.json)
      console.log(JSON.stringify({ employees: N, seedSeconds: Number(seedSeconds.toFixed(2)), fanoutSeconds: Number(fanoutSeconds.toFixed(2)), cpuUsPerJob }));
    if (!ok) throw new Error(`counts do not match: ${JSON.stringify({ ...counts, enqueued: summary.enqueued, expected: N })}`);
  } finally {
    await pool.end().catch(() => {});
    await db.dispose();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench:fanout: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  },
);

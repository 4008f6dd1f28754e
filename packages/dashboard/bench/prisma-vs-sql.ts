/**
 * Benchmark: the HR and admin reads on Prisma Client against SQL (the product's own functions where
 * SQL was kept; bench/sql-baseline.ts for the schedules read that Prisma replaced),
 * in one process on one pool, interleaved call by call (the machine is shared: both sides see
 * the same load). Prisma side: the product's code where Prisma was kept (schedules), else
 * bench/prisma-candidates.ts (the reads that stayed SQL because Prisma measured slower). Database: bench/seed.ts (50,000 employees, 100,000 jobs
 * in one run, 250 failed), the failed jobs given an error text and kind.
 *   npm run bench:prisma -w @beton/dashboard [-- --calls 200] [--json]
 * The last line with --json: {"date", "loadavg", "calls", "reads": [{read, sql: {p50, p95}, prisma: {p50, p95}, ratio}]}.
 */
import { createDatabaseIfMissing, createPool, dropDatabase, migrateDatabase, withDatabase } from '@beton/db';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import * as now from '../src/index.ts';
import * as candidate from './prisma-candidates.ts';
import * as before from './sql-baseline.ts';
import { seedOneRun } from './seed.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '200' }, slips: { type: 'string', default: '50000' }, json: { type: 'boolean', default: false } },
});
const CALLS = Number(values.calls);
const SLIPS = Number(values.slips);
const server = withDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
const name = `beton_bench_${randomBytes(3).toString('hex')}`;

/** JSON with object keys sorted (key order is not part of a response's shape). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) && !(x instanceof Date) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => p.localeCompare(q))) : x,
  );
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/** Both sides called alternately (which goes first alternates too), after 5 warm-up calls each. */
async function compare(read: string, sql: () => Promise<unknown>, prisma: () => Promise<unknown>) {
  // Same answer first: the conversion keeps every response shape.
  const [a, b] = [canonical(await sql()), canonical(await prisma())];
  if (a !== b) throw new Error(`${read}: Prisma's answer differs from SQL's\nSQL:    ${a.slice(0, 600)}\nPrisma: ${b.slice(0, 600)}`);
  for (let i = 0; i < 5; i++) {
    await sql();
    await prisma();
  }
  const t = { sql: [] as number[], prisma: [] as number[] };
  const once = async (side: 'sql' | 'prisma') => {
    const start = performance.now();
    await (side === 'sql' ? sql() : prisma());
    t[side].push(performance.now() - start);
  };
  for (let i = 0; i < CALLS; i++) {
    if (i % 2) {
      await once('sql');
      await once('prisma');
    } else {
      await once('prisma');
      await once('sql');
    }
  }
  const stats = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return { p50: +pct(xs, 0.5).toFixed(2), p95: +pct(xs, 0.95).toFixed(2) };
  };
  const row = { read, sql: stats(t.sql), prisma: stats(t.prisma), ratio: 0 };
  row.ratio = +(row.prisma.p50 / row.sql.p50).toFixed(2);
  console.log(
    `${read.padEnd(40)} SQL p50 ${row.sql.p50.toFixed(2).padStart(7)} p95 ${row.sql.p95.toFixed(2).padStart(7)} | Prisma p50 ${row.prisma.p50.toFixed(2).padStart(7)} p95 ${row.prisma.p95.toFixed(2).padStart(7)} | ×${row.ratio}`,
  );
  return row;
}

await createDatabaseIfMissing(server, name);
const url = withDatabase(server, name);
const pool = createPool({ url, max: 4 });
try {
  await migrateDatabase(url);
  const { companyId, runId } = await seedOneRun(pool, SLIPS);
  await pool.query(`update jobs set last_error = 'Recipient rejected: mailbox unavailable (550)', last_error_kind = 'permanent' where status = 'failed'`);
  await pool.query(`insert into schedule_runs (schedule_id, due_at, enqueued_by) select 'payroll:' || id, now() - interval '1 day', 'bench' from companies`);
  await pool.query('vacuum analyze');
  // An employee with a failed email (its render done): two jobs, two attempts.
  const {
    rows: [emp],
  } = await pool.query<{ id: number; company_id: string }>(
    `select e.id, e.company_id from jobs j join employees e on e.id = j.employee_id where j.status = 'failed' order by e.id limit 1`,
  );
  const hr = emp!.company_id;
  const {
    rows: [job],
  } = await pool.query<{ id: number }>(`select id from jobs where status = 'failed' order by id limit 1`);
  const page = { limit: 50, offset: 0 };
  const reads = [
    await compare(
      'failed jobs list (no filter)',
      () => now.listFailedJobs(pool, {}, page),
      () => candidate.listFailedJobs(pool, {}, page),
    ),
    await compare(
      'failed jobs list (company, code, q)',
      () => now.listFailedJobs(pool, { companyId, errorCode: 'invalid_recipient', q: 'mailbox' }, page),
      () => candidate.listFailedJobs(pool, { companyId, errorCode: 'invalid_recipient', q: 'mailbox' }, page),
    ),
    await compare(
      'failed jobs count (task, kind, day)',
      () => now.countFailedJobs(pool, { task: 'send-slip-email', errorKind: 'permanent', fromDay: '2026-01-01' }),
      () => candidate.countFailedJobs(pool, { task: 'send-slip-email', errorKind: 'permanent', fromDay: '2026-01-01' }),
    ),
    await compare(
      'failed facets',
      () => now.failedFacets(pool),
      () => candidate.failedFacets(pool),
    ),
    await compare(
      'failed job detail',
      () => now.failedJobDetail(pool, job!.id),
      () => candidate.failedJobDetail(pool, job!.id),
    ),
    await compare(
      'employee detail',
      () => now.employeeDetail(pool, hr, emp!.id),
      () => candidate.employeeDetail(pool, hr, emp!.id),
    ),
    await compare(
      'employee in company',
      () => now.assertEmployeeInCompany(pool, hr, emp!.id),
      () => candidate.assertEmployeeInCompany(pool, hr, emp!.id),
    ),
    await compare(
      'run for approval',
      () => now.runForApproval(pool, companyId, runId),
      () => candidate.runForApproval(pool, companyId, runId),
    ),
    await compare(
      'schedules',
      () => before.listSchedules(pool),
      () => now.listSchedules(pool),
    ),
  ];
  const load = loadavg().map((n) => +n.toFixed(1));
  console.log(`${CALLS} calls each, ${SLIPS.toLocaleString('en-US')} employees, load average ${load.join(' ')}`);
  if (values.json) console.log(JSON.stringify({ date: new Date().toISOString(), loadavg: load, calls: CALLS, reads }));
} finally {
  await pool.end();
  await dropDatabase(server, name);
}

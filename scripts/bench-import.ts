/**
 * `npm run bench:import -- [--rows 50000] [--format csv|xlsx] [--profile] [--json]`
 *
 * The employee import on a fresh database (DATABASE_URL's server, else a throwaway embedded
 * PostgreSQL): an upload of N employee rows (1 in 1,000 broken) is stored and its jobs queued as
 * HR's page does, then the import job's handler runs both phases as a worker runs them — the dry
 * run (validate, compare, error report) and the apply (batches of 1,000, each one transaction
 * with its audit entries and checkpoint). Target: upload + dry run + apply of 50,000 rows
 * <= 30 s. Then the same file again: its dry run must find every valid row unchanged. The
 * counts are verified against the database; the last line with --json is the figures.
 */
import { createPool } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs';
import type { HandlerContext, Logger } from '@beton/jobs';
import { createImport, importView, requestApply, type EnqueueImportJob, type ImportEmployeesPayload } from '@beton/people';
import { importEmployeesHandler } from '@beton/people/jobs/import-employees/handler';
import { parseArgs } from 'node:util';
import { openScratchDatabase } from '../apps/worker/src/cli/database.ts';
import { employeeRows, toCsv, toXlsx } from './lib/employee-file.ts';
import { installSqlProfile } from './lib/sql-profile.ts';

// Every statement of the import, grouped, with its total time (printed with --profile).
const sql = installSqlProfile();

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '50000' },
    format: { type: 'string', default: 'csv' },
    json: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('Usage: npm run bench:import -- [--rows 50000] [--format csv|xlsx] [--profile] [--json]');
  process.exit(0);
}
const N = Number(values.rows);
const formatGiven = values.format === 'xlsx' ? 'xlsx' : values.format === 'csv' ? 'csv' : null;
if (!Number.isInteger(N) || N < 1 || !formatGiven) {
  console.error('bench:import: --rows must be a whole number >= 1 and --format csv or xlsx');
  process.exit(2);
}
const format: 'csv' | 'xlsx' = formatGiven;
const TARGET_S = 30 * (N / 50_000);
const log = (line: string) => process.stderr.write(`${line}\n`);
const fmt = (n: number) => n.toLocaleString('en-US');
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

async function main() {
  const db = await openScratchDatabase('import', { log });
  const pool = createPool({ url: db.url, max: 4, applicationName: 'bench-import' });
  try {
    const companyId = (await pool.query<{ id: string }>(`insert into companies (name) values ('Bench Import Ltd') returning id`)).rows[0]!.id;
    const broken = Object.fromEntries(Array.from({ length: Math.floor(N / 1000) }, (_, i) => [i * 1000 + 7, { email: 'broken@@example' }]));
    const content = format === 'csv' ? toCsv(employeeRows(N, { broken })) : await toXlsx(employeeRows(N, { broken }));
    const errorsExpected = Object.keys(broken).length;
    log(`${fmt(N)} rows as ${format.toUpperCase()}: ${(content.byteLength / 1024 / 1024).toFixed(1)} MiB`);

    const jobs = createJobClient(pool, jobDefinitions);
    const queued: ImportEmployeesPayload[] = [];
    const enqueue: EnqueueImportJob = async (client, p) => {
      queued.push(p);
      await jobs.enqueue('import-employees', p, { client });
    };
    const handler = importEmployeesHandler({
      pool,
      jobs: {
        enqueue: (name, p) => {
          queued.push(p);
          return jobs.enqueue(name, p);
        },
      },
    });
    /** Runs the queued job and the parts it queues, as the maintenance worker would, one after the other. */
    const runQueued = async () => {
      while (queued.length) await handler(queued.shift()!, ctx);
    };
    // The handler's context as a worker gives it, its info lines printed here.
    const quiet = () => {};
    const benchLog: Logger = {
      debug: quiet,
      warn: quiet,
      error: quiet,
      fatal: quiet,
      info: (fields: unknown, msg?: string) => log(`  ${msg ?? ''} ${JSON.stringify(fields)}`),
      child: () => benchLog,
    };
    const ctx: HandlerContext = {
      jobId: 0,
      attempt: 1,
      maxAttempts: 1,
      idempotencyKey: 'bench-import',
      workerId: 'bench-import',
      signal: new AbortController().signal,
      log: benchLog,
      rateLimit: async () => {},
      rateTurnOnTime: () => true,
      timeLeftMs: () => Number.POSITIVE_INFINITY,
      hold: () => quiet,
    };

    sql.on();
    const t0 = performance.now();
    const { id } = await createImport(pool, { companyId, actor: 'bench', filename: `bench.${format}`, format, content, effectiveMonth: '2026-12', enqueue });
    const t1 = performance.now();
    await runQueued();
    const t2 = performance.now();
    const dry = await importView(pool, companyId, id);
    await requestApply(pool, { companyId, importId: id, actor: 'bench', enqueue });
    await runQueued();
    const t3 = performance.now();
    sql.off();
    const done = await importView(pool, companyId, id);

    const again = await createImport(pool, { companyId, actor: 'bench', filename: `bench.${format}`, format, content, effectiveMonth: '2026-12', enqueue });
    const t4 = performance.now();
    await runQueued();
    const t5 = performance.now();
    const second = await importView(pool, companyId, again.id);

    const db1 = (
      await pool.query<{ employees: number; salaries: number; audits: number }>(
        `select (select count(*)::int from employees where company_id = $1) as employees,
              (select count(*)::int from salary_components) as salaries,
              (select count(*)::int from audit_log where action = 'import-employee') as audits`,
        [companyId],
      )
    ).rows[0]!;
    const valid = N - errorsExpected;
    const ok =
      dry.counts.new === valid &&
      dry.counts.errors === errorsExpected &&
      done.status === 'applied' &&
      done.applied.new === valid &&
      db1.employees === valid &&
      db1.salaries === valid &&
      db1.audits === valid &&
      second.counts.unchanged === valid &&
      second.counts.new === 0 &&
      second.counts.changed === 0;
    const total = (t3 - t0) / 1000;

    console.log('');
    console.log(`bench:import — ${fmt(N)} rows, ${format.toUpperCase()} ${(content.byteLength / 1024 / 1024).toFixed(1)} MiB, fresh database`);
    console.log(`upload   ${((t1 - t0) / 1000).toFixed(2).padStart(6)} s  (stored, dry-run job queued)`);
    console.log(
      `dry run  ${((t2 - t1) / 1000).toFixed(2).padStart(6)} s  ${fmt(dry.counts.new)} new, ${fmt(dry.counts.changed)} changed, ${fmt(dry.counts.unchanged)} unchanged, ${fmt(dry.counts.errors)} errors`,
    );
    console.log(
      `apply    ${((t3 - t2) / 1000).toFixed(2).padStart(6)} s  ${fmt(done.applied.new)} employees written with their salary row and audit entry, ${Math.ceil(N / 1000)} batches`,
    );
    console.log(
      `total    ${total.toFixed(2).padStart(6)} s  (target <= ${TARGET_S.toFixed(0)} s: ${total <= TARGET_S ? 'met' : 'MISSED'}) — ${fmt(Math.round(N / total))} rows/s`,
    );
    console.log(
      `again    ${((t5 - t4) / 1000).toFixed(2).padStart(6)} s  dry run of the same file: ${fmt(second.counts.unchanged)} unchanged, ${second.counts.new + second.counts.changed} to apply`,
    );
    console.log(`verified ${fmt(db1.employees)} employees, ${fmt(db1.salaries)} salary rows, ${fmt(db1.audits)} audit entries: ${ok ? 'OK' : 'MISMATCH'}`);
    if (values.profile) {
      const entries = [...sql.stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
      console.log('');
      console.log('Where the upload, dry run and apply spent their database time:');
      for (const [text, st] of entries.slice(0, 12)) console.log(`${fmt(st.calls).padStart(6)} ${(st.ms / 1000).toFixed(2).padStart(7)} s  ${text}`);
    }
    if (values.json) {
      console.log(
        JSON.stringify({
          rows: N,
          format,
          bytes: content.byteLength,
          uploadSeconds: seconds(t1 - t0),
          dryRunSeconds: seconds(t2 - t1),
          applySeconds: seconds(t3 - t2),
          totalSeconds: Number(total.toFixed(2)),
          targetSeconds: TARGET_S,
          met: total <= TARGET_S,
          rerunDryRunSeconds: seconds(t5 - t4),
          verified: ok,
        }),
      );
    }
    if (!ok) throw new Error(`counts do not match: ${JSON.stringify({ dry: dry.counts, applied: done.applied, db: db1, second: second.counts })}`);
  } finally {
    await pool.end().catch(() => {});
    await db.dispose();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench:import: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  },
);

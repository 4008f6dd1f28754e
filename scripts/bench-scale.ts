/**
 * `npm run bench:scale -- [--employees 500000] [--companies 600] [--compare-at 50000] [--reps 15] [--json]`
 *
 * Ten times the tenants (issue 23, item 2). For each size — `--compare-at` (default a tenth:
 * 50,000 employees over 60 companies; 0 skips it) and then `--employees` over `--companies` —
 * on a fresh embedded PostgreSQL (fsync off):
 *   1. seed (seedDatabase: one multi-row insert per table, generated in the database);
 *   2. fan out the month (runPayroll, what the payroll-fanout job runs) — target ≤ 15 s at 500,000;
 *   3. put the month in flight, 30 % done, with SQL (the states the engine would leave):
 *      33 % rendered (job and attempt done, slip stored), their emails enqueued through the job
 *      client, 30 % sent (delivery recorded), 1 % failed (invalid_recipient), 1 % sending,
 *      1 % waiting; ten live workers; every company's salaries submitted to a bank simulator
 *      (submitSalaryTransfers, the submit-bank-transfers job) and a quarter of them credited;
 *   4. time (p50 over `--reps`) the service functions the tRPC procedures call: HR progress
 *      (runProgress, listRunProgress) ≤ 20 ms; employees page and search (listEmployees) ≤ 50 ms;
 *      admin failed jobs (listFailedJobs + countFailedJobs + failedFacets), queues
 *      (queuesOverview), workers (listWorkers) ≤ 100 ms; the stuck-job sweep (recoverStuckJobs)
 *      and the bank poll (pollBankCredits: one window crediting a quarter of the month, then
 *      polls that find nothing new) ≤ 2 s;
 *   5. start the three worker processes on that database for `--workers-seconds` and sample
 *      their peak RSS (≤ 250 MB);
 *   6. database size per 10,000 employees per month (rows per slip × bytes per row measured per
 *      table, indexes included, plus a real slip PDF's bytes: the slips here store a stand-in).
 * Each figure is printed against its target and, with both sizes, how it grew for ten times
 * the tenants: flat (×< 1.5), sub-linear (logarithmic-like, growth exponent < 0.5) or linear.
 */
import { seedDatabase } from '@beton/db';
import { countFailedJobs, failedFacets, listEmployees, listFailedJobs, listRunProgress, listWorkers, queuesOverview, runProgress } from '@beton/dashboard';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, recoverStuckJobs } from '@beton/jobs';
import { createBankClient, loadSlipData, pollBankCredits, runPayroll, submitSalaryTransfers } from '@beton/payroll';
import { createSlipRenderer } from '@beton/pdf';
import { startBankSimulator, startProviderSimulator } from '@beton/simulators';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { exitHandling, freshDatabase, median, round, sampleRss, sleep, spawnWorkerSlowStart } from './lib/drill-harness.ts';
import { deleteWakeupsOfJobsIn } from '@beton/jobs/wakeups';

const { values: args } = parseArgs({
  options: {
    employees: { type: 'string', default: '500000' },
    companies: { type: 'string', default: '600' },
    'compare-at': { type: 'string' },
    reps: { type: 'string', default: '15' },
    'workers-seconds': { type: 'string', default: '40' },
    json: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  process.stdout.write(
    'Usage: npm run bench:scale -- [--employees 500000] [--companies 600] [--compare-at 50000 (0: one size)] [--reps 15] [--workers-seconds 40] [--json] [--keep (with DATABASE_URL: the database stays, for EXPLAIN)]\n',
  );
  process.exit(0);
}
const N = Number(args.employees);
const COMPANIES = Number(args.companies);
const COMPARE = args['compare-at'] !== undefined ? Number(args['compare-at']) : Math.round(N / 10);
const REPS = Number(args.reps);
const WORKERS_S = Number(args['workers-seconds']);
const MONTH = '2026-11';
const say = (line: string) => process.stdout.write(`${line}\n`);
const exit = exitHandling(say);

/** A figure's target: at most `max` (unit in the name). */
const TARGETS = {
  seedSeconds: { max: Infinity, label: 'seed (s)' },
  fanoutSeconds: { max: 15, label: 'fan-out of the month (s)', scaleWithN: true },
  hrProgressMs: { max: 20, label: 'HR progress: one run (runProgress, ms)' },
  hrRunsListMs: { max: 20, label: "HR progress: the company's runs (listRunProgress, ms)" },
  employeesPageMs: { max: 50, label: 'employees page (listEmployees, ms)' },
  employeesSearchMs: { max: 50, label: 'employees search "rahman" (listEmployees, ms)' },
  adminFailedMs: { max: 100, label: 'admin failed jobs page (list + count + facets, ms)' },
  adminQueuesMs: { max: 100, label: 'admin queues page (queuesOverview, ms)' },
  adminWorkersMs: { max: 100, label: 'admin workers page (listWorkers, ms)' },
  sweepMs: { max: 2000, label: 'stuck-job sweep, every 5 min (recoverStuckJobs, ms)' },
  sweepHourlyMs: { max: Infinity, label: 'the hourly sweep, also jobs with no wake-up (ms)' },
  bankPollWindowMs: { max: 2000, label: 'bank poll, a window crediting 1/4 of the month (ms)' },
  bankPollIdleMs: { max: 2000, label: 'bank poll, nothing new (p50, ms)' },
  peakWorkerRssMb: { max: 250, label: 'peak worker RSS (MB)' },
  dbMbPer10kEmployeeMonth: { max: Infinity, label: 'database MB per 10,000 employees per month' },
} as const;
type Figure = keyof typeof TARGETS;
type Figures = Record<Figure, number> & { employees: number; companies: number };

async function p50(fn: () => Promise<unknown>, reps = REPS): Promise<number> {
  await fn(); // warm
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return round(median(ms), 2);
}

async function measure(employees: number, companies: number): Promise<Figures> {
  say(
    `\n== ${employees.toLocaleString('en')} employees over ${companies} companies (load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  );
  if (args.keep && !process.env.DATABASE_URL) throw new Error('--keep needs DATABASE_URL (a server that outlives this script)');
  const db = await freshDatabase('scale', { fast: true, keep: args.keep });
  if (args.keep) say(`  --keep: the database stays: ${db.url}`);
  const cleanups: Array<() => Promise<unknown>> = [() => db.drop()];
  exit.add(() => db.drop());
  const pool = db.pool;
  try {
    let t = performance.now();
    await seedDatabase(pool, { employees, companies, invalidRate: 0.005, seed: 20261101 });
    const seedSeconds = round((performance.now() - t) / 1000, 2);
    await pool.query('analyze');
    say(`  seeded in ${seedSeconds} s`);

    const jobs = createJobClient(pool, jobDefinitions);
    t = performance.now();
    const fanout = await runPayroll({ pool, jobs, lock: new PostgresLock(pool), by: 'bench' }, MONTH);
    const fanoutSeconds = round((performance.now() - t) / 1000, 2);
    say(
      `  fan-out: ${fanout.enqueued.toLocaleString('en')} render jobs for ${fanout.companies} companies in ${fanoutSeconds} s (${Math.round(fanout.enqueued / fanoutSeconds).toLocaleString('en')} jobs/s)`,
    );

    // ---- the month in flight, 30 % done ----
    t = performance.now();
    await pool.query(
      `insert into workers (id, host, pid, queue, started_at, last_seen)
       select 'bench-' || q || '-' || i, 'bench-host', 1000 + i, q, now() - interval '1 hour', now()
       from unnest(array['pdf-render', 'send-email', 'maintenance']) q cross join generate_series(1, 4) i`,
    );
    // Renders of 33 % done (one attempt each, over the last 20 minutes), their slips stored.
    await pool.query(
      `with r as (
         update jobs j set status = 'done', attempts = 1, worker_id = 'bench-pdf-render-1',
                started_at = now() - make_interval(secs => 1200 - (j.employee_id % 1200)), finished_at = now() - make_interval(secs => 1200 - (j.employee_id % 1200)) + interval '40 ms'
         where j.task_name = 'render-slip' and j.employee_id % 100 < 33
         returning j.id, j.payroll_run_id, j.task_name, j.started_at, j.finished_at, j.employee_id, j.idempotency_key)
       , a as (insert into job_attempts (job_id, attempt, worker_id, started_at, finished_at, duration_ms, outcome, payroll_run_id, task_name)
               select id, 1, 'bench-pdf-render-1', started_at, finished_at, 40, 'done', payroll_run_id, task_name from r)
       insert into slips (employee_id, month, key, pdf, sha256, bytes, created_at)
       select employee_id, $1, idempotency_key, decode(repeat('00', 64), 'hex'), 'x', 17600, finished_at from r`,
      [MONTH],
    );
    await deleteWakeupsOfJobsIn(pool, ['done']);
    // Their emails, enqueued as the render job does (the job client: rows and wake-ups).
    const rendered = (
      await pool.query<{ payload: { companyId: string; employeeId: number; month: string; payrollRunId?: string } }>(
        `select payload from jobs where task_name = 'render-slip' and status = 'done'`,
      )
    ).rows;
    for (let i = 0; i < rendered.length; i += 20_000) {
      await jobs.enqueueMany(
        'send-slip-email',
        rendered.slice(i, i + 20_000).map((r) => ({ payload: r.payload })),
      );
    }
    // 30 % sent, 1 % failed for good (invalid recipient), 1 % sending now; the rest wait.
    await pool.query(
      `with e as (
         update jobs j set status = case when j.employee_id % 100 < 30 then 'done' when j.employee_id % 100 = 30 then 'failed' else 'running' end::"JobStatus",
                attempts = case when j.employee_id % 100 = 30 then 6 else 1 end, worker_id = 'bench-send-email-1',
                started_at = now() - make_interval(secs => 1190 - (j.employee_id % 1200) * 0.99), heartbeat_at = now(),
                finished_at = case when j.employee_id % 100 <= 30 then now() - make_interval(secs => 1190 - (j.employee_id % 1200) * 0.99) + interval '1300 ms' end,
                last_error = case when j.employee_id % 100 = 30 then 'The provider refused the recipient address (invalid)' end,
                last_error_kind = case when j.employee_id % 100 = 30 then 'permanent' end::"ErrorKind",
                last_error_code = case when j.employee_id % 100 = 30 then 'invalid_recipient' end
         where j.task_name = 'send-slip-email' and j.employee_id % 100 < 32
         returning j.*)
       , a as (insert into job_attempts (job_id, attempt, worker_id, started_at, finished_at, duration_ms, outcome, error_kind, error_code, error_message, payroll_run_id, task_name)
               select id, attempts, worker_id, started_at, finished_at, case when finished_at is not null then 1300 end,
                      case status when 'done' then 'done' when 'failed' then 'failed' else 'running' end::"AttemptOutcome",
                      last_error_kind, last_error_code, last_error, payroll_run_id, task_name from e)
       insert into email_deliveries (idempotency_key, recipient, status, provider_message_id, attempts, payroll_run_id, company_id, employee_id, created_at, sent_at)
       select left(e.idempotency_key, -6), emp.email, case when e.status = 'done' then 'sent' else 'sending' end::"DeliveryStatus", case when e.status = 'done' then 'msg-' || e.id end, 1,
              e.payroll_run_id, e.company_id, e.employee_id, e.started_at, e.finished_at
       from e join employees emp on emp.id = e.employee_id where e.status <> 'failed'`,
    );
    await deleteWakeupsOfJobsIn(pool, ['done', 'failed', 'running']);

    // Every company's salaries submitted to the bank (the submit-bank-transfers job's function).
    // Nothing credited on its own (a day's delay): the poll below sees what bank.credit() credits.
    const bank = await startBankSimulator({ creditDelayMs: 86_400_000 });
    cleanups.push(() => bank.close());
    const bankClient = createBankClient({ baseUrl: bank.url, apiKey: bank.apiKey });
    const companyIds = (await pool.query<{ id: string }>('select id from companies order by id')).rows.map((r) => r.id);
    const submitStart = performance.now();
    for (const id of companyIds) await submitSalaryTransfers({ pool, bank: bankClient }, { companyId: id, month: MONTH });
    const submitSeconds = round((performance.now() - submitStart) / 1000, 1);
    await pool.query('vacuum analyze');
    const inFlight = (
      await pool.query<{ status: string; task_name: string; n: number }>(
        `select task_name, status::text, count(*)::int as n from jobs group by 1, 2 order by 1, 2`,
      )
    ).rows;
    say(
      `  month in flight in ${round((performance.now() - t) / 1000, 1)} s (salaries submitted in ${submitSeconds} s): ${inFlight.map((r) => `${r.task_name} ${r.status} ${r.n.toLocaleString('en')}`).join(', ')}`,
    );

    // ---- reads, the service functions the tRPC procedures call ----
    const typical = (
      await pool.query<{ company_id: string; run: string; n: number }>(
        `select r.company_id, r.id as run, r.employee_count as n from payroll_runs r order by r.employee_count, r.id offset (select count(*) / 2 from payroll_runs) limit 1`,
      )
    ).rows[0]!;
    say(`  reads for a median company (${typical.n} employees), ${REPS} each:`);
    const f = {} as Figures;
    f.employees = employees;
    f.companies = companies;
    f.seedSeconds = seedSeconds;
    f.fanoutSeconds = fanoutSeconds;
    f.hrProgressMs = await p50(() => runProgress(pool, typical.company_id, typical.run));
    f.hrRunsListMs = await p50(() => listRunProgress(pool, typical.company_id));
    f.employeesPageMs = await p50(() => listEmployees(pool, typical.company_id, { month: MONTH, limit: 25, offset: 0 }));
    f.employeesSearchMs = await p50(() => listEmployees(pool, typical.company_id, { month: MONTH, search: 'rahman', limit: 25, offset: 0 }));
    f.adminFailedMs = await p50(() => Promise.all([listFailedJobs(pool, {}, { limit: 50, offset: 0 }), countFailedJobs(pool, {}), failedFacets(pool)]));
    f.adminQueuesMs = await p50(() => queuesOverview(pool));
    f.adminWorkersMs = await p50(() => listWorkers(pool));
    say(
      `    HR progress ${f.hrProgressMs} ms, runs list ${f.hrRunsListMs} ms, employees page ${f.employeesPageMs} ms, search ${f.employeesSearchMs} ms, admin failed ${f.adminFailedMs} ms, queues ${f.adminQueuesMs} ms, workers ${f.adminWorkersMs} ms`,
    );
    t = performance.now();
    const swept = await recoverStuckJobs(pool, {});
    say(
      `    first sweep: ${round(performance.now() - t)} ms, ${swept.recovered.length} recovered (their workers silent), ${swept.requeued.length} stranded queued again`,
    );
    // The scheduled sweep every 5 minutes; once an hour it also looks for waiting jobs with no
    // wake-up at all (sweeper.ts: missingWakeups), reported apart.
    f.sweepMs = await p50(() => recoverStuckJobs(pool, { missingWakeups: false }), Math.min(REPS, 5));
    t = performance.now();
    await recoverStuckJobs(pool, {});
    f.sweepHourlyMs = round(performance.now() - t);

    // The bank: a quarter of the month credited since the last poll, then polls that find nothing new.
    const refs = (await pool.query<{ reference: string }>(`select reference from salary_transfers where employee_id % 4 = 0`)).rows.map((r) => r.reference);
    bank.credit(refs);
    const pollDeps = { pool, bank: bankClient, jobs, lock: new PostgresLock(pool), by: 'bench' };
    t = performance.now();
    const window = await pollBankCredits(pollDeps, '2026-12-01T02:15:00.000Z');
    f.bankPollWindowMs = round(performance.now() - t, 1);
    let k = 0;
    f.bankPollIdleMs = await p50(() => pollBankCredits(pollDeps, new Date(Date.UTC(2026, 11, 1, 2, 30 + 15 * k++)).toISOString()), Math.min(REPS, 7));
    say(`  bank poll credited ${window.credited.toLocaleString('en')} transfers of ${window.companies} companies`);

    // ---- worker processes on this database: peak RSS (--workers-seconds 0: skipped) ----
    if (WORKERS_S > 0) {
      const provider = await startProviderSimulator({ latencyMs: 1200, latencySpreadMs: 200, ratePerSecond: 1000, storeAttachmentBytes: false });
      cleanups.push(() => provider.close());
      const env = {
        DATABASE_URL: db.url,
        SENDGRID_BASE_URL: provider.url,
        SENDGRID_API_KEY: 'SG.beton-dev',
        LOG_LEVEL: 'warn',
        EMAIL_CONCURRENCY_LIMIT: '200',
        EMAIL_RATE_LIMIT: '1000',
        BANK_API_URL: bank.url,
        SWEEP_CRON: '* * * * *',
        BANK_POLL_CRON: '* * * * *',
      };
      const workers = [
        spawnWorkerSlowStart({ name: 'pdf-render', queue: 'pdf-render', env }),
        spawnWorkerSlowStart({ name: 'send-email', queue: 'send-email', env }),
        spawnWorkerSlowStart({ name: 'scheduler', queue: 'maintenance', env }),
      ];
      const rss = sampleRss(() => workers.map((w) => ({ name: w.name, pid: w.pid })), 500);
      await Promise.all(workers.map((w) => w.ready));
      await sleep(WORKERS_S * 1000);
      rss.stop();
      await Promise.all(workers.map((w) => w.stop(20_000)));
      const peaks = [...rss.peak].map(([name, mb]) => `${name} ${round(mb)} MB`).join(', ');
      f.peakWorkerRssMb = round(Math.max(...rss.peak.values()));
      say(`  workers ran ${WORKERS_S} s on this database: peak RSS ${peaks}`);
    } else f.peakWorkerRssMb = 0;

    // ---- size per 10,000 employees per month ----
    const renderer = createSlipRenderer();
    const sample = (await pool.query<{ id: number }>('select id from employees order by id limit 8')).rows;
    let pdfBytes = 0;
    for (const { id } of sample) {
      const { companyId: _c, replyTo: _r, ...data } = await loadSlipData(pool, id, MONTH);
      pdfBytes += (await renderer.render(data)).byteLength;
    }
    pdfBytes /= sample.length;
    const perRow = async (table: string, where = 'true') => {
      const { rows } = await pool.query<{ bytes: string; n: string }>(
        `select pg_total_relation_size($1::regclass) as bytes, (select count(*) from ${table} where ${where}) as n`,
        [table],
      );
      return Number(rows[0]!.bytes) / Math.max(1, Number(rows[0]!.n));
    };
    // Per slip and month: a render and an email job, an attempt each, a delivery, a slip, a transfer.
    const slipRow = (await perRow('slips')) - 64 + pdfBytes;
    const perSlip =
      2 * (await perRow('jobs')) + 2 * (await perRow('job_attempts')) + (await perRow('email_deliveries')) + slipRow + (await perRow('salary_transfers'));
    f.dbMbPer10kEmployeeMonth = round((perSlip * 10_000) / 2 ** 20, 1);
    say(
      `  size: ${round(perSlip / 1024, 1)} KB per slip and month (a real PDF ${round(pdfBytes / 1024, 1)} KB of it) → ${f.dbMbPer10kEmployeeMonth} MB per 10,000 employees per month; this database ${round(Number((await pool.query<{ b: string }>('select pg_database_size(current_database()) as b')).rows[0]!.b) / 2 ** 20)} MB`,
    );
    return f;
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
}

function growth(small: number, big: number, factor: number): string {
  if (!(small > 0) || !(big > 0)) return '';
  const ratio = big / small;
  const exponent = Math.log(ratio) / Math.log(factor);
  const kind = ratio < 1.5 ? 'flat' : exponent < 0.5 ? 'sub-linear (log-like)' : exponent < 0.8 ? 'between log and linear' : 'LINEAR';
  return `×${round(ratio, 2)} (${kind})`;
}

async function main() {
  for (const [name, v] of Object.entries({ employees: N, companies: COMPANIES, reps: REPS })) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a whole number >= 1 (got ${v})`);
  }
  if (!Number.isInteger(WORKERS_S) || WORKERS_S < 0) throw new Error(`--workers-seconds must be a whole number >= 0 (got ${args['workers-seconds']})`);
  if (!Number.isInteger(COMPARE) || COMPARE < 0 || COMPARE >= N)
    throw new Error(`--compare-at must be a whole number below --employees, or 0 (got ${args['compare-at']})`);
  say(
    `Beton scale bench — ${N.toLocaleString('en')} employees over ${COMPANIES} companies${COMPARE ? `, compared with ${COMPARE.toLocaleString('en')} over ${Math.max(1, Math.round((COMPANIES * COMPARE) / N))}` : ''}`,
  );
  say(
    `machine: ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the start, Node ${process.version}`,
  );
  const small = COMPARE ? await measure(COMPARE, Math.max(1, Math.round((COMPANIES * COMPARE) / N))) : undefined;
  const big = await measure(N, COMPANIES);
  const loadEnd = os.loadavg();
  say(
    `\nScale report (load average ${loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end${loadEnd[0]! > os.availableParallelism() ? ': the machine was LOADED, times are not a quiet machine’s' : ''})`,
  );
  say(
    `  ${'figure'.padEnd(58)} ${(small ? small.employees.toLocaleString('en') : '').padStart(9)} ${big.employees.toLocaleString('en').padStart(9)}   target      growth ×${small ? round(N / COMPARE, 1) : '-'}`,
  );
  let met = true;
  for (const [key, target] of Object.entries(TARGETS) as Array<[Figure, (typeof TARGETS)[Figure]]>) {
    const max = target.max;
    const ok = big[key] <= max;
    if (!ok) met = false;
    say(
      `  ${target.label.padEnd(58)} ${String(small?.[key] ?? '').padStart(9)} ${String(big[key]).padStart(9)}   ${max === Infinity ? '—'.padEnd(10) : `≤ ${max} ${ok ? 'ok' : 'MISSED'}`.padEnd(10)}  ${small ? growth(small[key], big[key], N / COMPARE) : ''}`,
    );
  }
  say(`targets at ${N.toLocaleString('en')}: ${met ? 'all met' : 'NOT all met'}`);
  await exit.finish(0);
  if (args.json) say(JSON.stringify({ ...big, compare: small ?? null, loadAverage: round(loadEnd[0]!, 2), targetsMet: met }));
  process.exit(0);
}

main().catch(async (error) => {
  process.stderr.write(`bench:scale: ${error?.stack ?? error}\n`);
  await exit.finish(1);
  process.exit(1);
});

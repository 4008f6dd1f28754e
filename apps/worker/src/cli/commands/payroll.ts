import { countCompanies, findCompany } from '@beton/dashboard/companies';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock } from '@beton/jobs';
import { assertMonth, CompanyNotFoundError, FANOUT_PARALLEL, InvalidMonthError, runPayroll } from '@beton/payroll';
import { hostname } from 'node:os';
import { CliError, cliActor, numberFlag, parse, UsageError, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';

const help = `Usage: beton payroll run --month <YYYY-MM> [--company <id>] [--parallel ${FANOUT_PARALLEL}]

Runs the monthly payroll by hand, as the 02:00 schedule does: for each company, under the
payroll lock, inserts its payroll_runs row (unique per company and month) and enqueues one
render-slip job per employee. A company already run for that month is skipped.
Only enqueues: the pdf-render and send-email workers do the work.

Options:
  --month <m>     the month paid, e.g. 2026-11 (required)
  --company <id>  only this company (uuid)
  --parallel <n>  companies enqueued at once (default: ${FANOUT_PARALLEL})
  -h, --help      this help`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const payrollRun: Command = {
  path: ['payroll', 'run'],
  summary: "enqueue a month's slips for every company (or one)",
  help,
  async run(argv, io) {
    const { values } = parse(argv, { month: { type: 'string' }, company: { type: 'string' }, parallel: { type: 'string' } }, help);
    if (values.help) return (io.out(help), 0);
    if (!values.month) throw new UsageError('--month is required, e.g. --month 2026-11', help);
    try {
      assertMonth(values.month);
    } catch (error) {
      if (error instanceof InvalidMonthError) throw new UsageError(error.message);
      throw error;
    }
    if (values.company !== undefined && !UUID.test(values.company)) throw new UsageError(`--company must be a company id (uuid), got "${values.company}"`);
    const parallel = numberFlag(values.parallel, 'parallel', FANOUT_PARALLEL, { integer: true, min: 1, max: 32 });
    const month = values.month;
    const summary = await usingDatabase(
      async (db) => {
        const companies = await countCompanies(db.pool);
        if (companies === 0) throw new CliError('No companies in the database: run `npm run seed` first.');
        let target = `${companies} companies`;
        if (values.company) {
          const company = await findCompany(db.pool, values.company);
          if (!company) throw new CliError(new CompanyNotFoundError(values.company).message);
          target = `${company.name} (${values.company})`;
        }
        io.out(`Payroll ${month}: enqueuing slips for ${target}…`);
        const deps = { pool: db.pool, jobs: createJobClient(db.pool, jobDefinitions), lock: new PostgresLock(db.pool), by: `${cliActor()}@${hostname()}` };
        const started = performance.now();
        try {
          return await runPayroll(deps, month, {
            ...(values.company ? { companyId: values.company } : {}),
            parallel,
            onProgress: (done, total) => {
              const s = ((performance.now() - started) / 1000).toFixed(1);
              io.out(`  [${String(done).padStart(String(total).length)}/${total}] companies done · ${s} s`);
            },
          });
        } catch (error) {
          if (error instanceof CompanyNotFoundError) throw new CliError(error.message);
          throw error;
        }
        // One connection per lane (a company's transaction) and one for the lock.
      },
      io.err,
      parallel + 1,
    );
    const n = (x: number) => x.toLocaleString('en-US');
    if (summary.created === 0 && summary.existing === summary.companies) {
      io.out(
        `Already done: payroll ${month} was already run for ${summary.companies === 1 ? 'this company' : `all ${summary.companies} companies`}; nothing enqueued.`,
      );
      return 0;
    }
    io.out(
      `Done in ${(summary.ms / 1000).toFixed(2)} s: ${n(summary.enqueued)} render-slip jobs enqueued for ${summary.created} compan${summary.created === 1 ? 'y' : 'ies'}` +
        (summary.existing ? `; ${summary.existing} already run for ${month} (skipped)` : '') +
        (summary.locked ? `; ${summary.locked} locked by another server (skipped)` : ''),
    );
    return 0;
  },
};

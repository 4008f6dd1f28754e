import { AlreadySeededError, seedDatabase } from '@beton/db';
import { CliError, numberFlag, parse, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';
import { formatTable } from '../table.ts';

const help = `Usage: beton seed [--employees 50000] [--companies 60] [--invalid-rate 0.005] [--seed 20261101] [--reset]
       npm run seed -- [same options]

Fills the database with deterministic demo data: companies of uneven size, employees with
Bengali and Latin names and salaries, a share of invalid email addresses, one admin and one
HR login per company. The logins' passwords are random (the operating system's cryptographic
source, never the seed): printed once, stored only as argon2 hashes. More users:
\`beton users create\`.

Options:
  --employees <n>     employees over all companies (default: 50000)
  --companies <n>     companies (default: 60)
  --invalid-rate <r>  share of invalid email addresses, 0–1 (default: 0.005)
  --seed <s>          same seed → same companies and employees (default: 20261101)
  --reset             wipe companies, employees, users and jobs first
  -h, --help          this help`;

export const seed: Command = {
  path: ['seed'],
  summary: 'fill the database with demo companies, employees and logins',
  help,
  async run(argv, io) {
    const { values } = parse(
      argv,
      {
        employees: { type: 'string' },
        companies: { type: 'string' },
        'invalid-rate': { type: 'string' },
        seed: { type: 'string' },
        reset: { type: 'boolean' },
      },
      help,
    );
    if (values.help) return (io.out(help), 0);
    const options = {
      employees: numberFlag(values.employees, 'employees', 50_000, { integer: true, min: 0 }),
      companies: numberFlag(values.companies, 'companies', 60, { integer: true, min: 1 }),
      invalidRate: numberFlag(values['invalid-rate'], 'invalid-rate', 0.005, { min: 0, max: 1 }),
      seed: numberFlag(values.seed, 'seed', 20261101, { integer: true }),
      reset: values.reset === true,
    };
    const result = await usingDatabase(async (db) => {
      io.out(`Seeding ${options.employees.toLocaleString('en-US')} employees over ${options.companies} companies${options.reset ? ' (reset first)' : ''}…`);
      try {
        return await seedDatabase(db.pool, options);
      } catch (error) {
        if (error instanceof AlreadySeededError) throw new CliError(error.message);
        throw error;
      }
    }, io.err);
    io.out(
      `Seeded ${result.companies} companies, ${result.employees.toLocaleString('en-US')} employees ` +
        `(${result.invalidEmails} with an invalid email address) in ${(result.ms / 1000).toFixed(1)} s.`,
    );
    io.out('');
    io.out('Logins (shown only now — passwords are stored as hashes):');
    for (const line of formatTable(
      ['role', 'email', 'password', 'company'],
      result.logins.map((l) => [l.role, l.email, l.password, l.company ?? '-']),
    ))
      io.out(`  ${line}`);
    return 0;
  },
};

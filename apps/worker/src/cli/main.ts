import { DatabaseUnreachableError } from '@beton/db';
import { CliError, stdio, UsageError, type Command, type Output } from './args.ts';

interface Entry {
  path: string[];
  summary: string;
  /** Commands load on use, so `beton plan` never loads the database or PDF code. */
  load(): Promise<Command>;
}

const commands: Entry[] = [
  { path: ['jobs', 'stats'], summary: 'jobs per queue and status [--json]', load: async () => (await import('./commands/jobs.ts')).jobsStats },
  {
    path: ['jobs', 'list'],
    summary: 'jobs in a status (default failed) with their last error [--limit N] [--json]',
    load: async () => (await import('./commands/jobs.ts')).jobsList,
  },
  { path: ['jobs', 'retry'], summary: 'retry failed jobs: <id>... | --all-failed', load: async () => (await import('./commands/jobs.ts')).jobsRetry },
  { path: ['enqueue'], summary: "enqueue one job: <task> '<json>' [--run-at ISO]", load: async () => (await import('./commands/enqueue.ts')).enqueue },
  {
    path: ['payroll', 'run'],
    summary: "enqueue a month's slips: --month YYYY-MM [--company <id>]",
    load: async () => (await import('./commands/payroll.ts')).payrollRun,
  },
  {
    path: ['users', 'create'],
    summary: 'a dashboard user with a one-time password: --email E --role HR|ADMIN [--company C]',
    load: async () => (await import('./commands/users.ts')).usersCreate,
  },
  {
    path: ['users', 'list'],
    summary: 'dashboard users, roles, companies and live sessions [--json]',
    load: async () => (await import('./commands/users.ts')).usersList,
  },
  {
    path: ['companies', 'create'],
    summary: 'a company: --name N [--time-zone Z] [--schedule CRON] [--deadline HH:MM] [--protect-slips]',
    load: async () => (await import('./commands/companies.ts')).companiesCreate,
  },
  {
    path: ['companies', 'list'],
    summary: 'companies with schedule, settings, employees and HR users [--json]',
    load: async () => (await import('./commands/companies.ts')).companiesList,
  },
  {
    path: ['slips', 'export'],
    summary: 'one slip PDF to a file, audited: --slip ID --reason TEXT --out FILE',
    load: async () => (await import('./commands/slips.ts')).slipsExport,
  },
  { path: ['migrate'], summary: "apply Beton's migrations, then the job engine's", load: async () => (await import('./commands/migrate.ts')).migrate },
  { path: ['seed'], summary: 'demo companies, employees and logins [--employees N] [--reset]', load: async () => (await import('./commands/seed.ts')).seed },
  {
    path: ['email', 'check'],
    summary: 'check the email account: key, sender, plan, activity API',
    load: async () => (await import('./commands/email.ts')).emailCheck,
  },
  {
    path: ['email', 'resume'],
    summary: 'resume the send-email queue paused by an account fault',
    load: async () => (await import('./commands/email.ts')).emailResume,
  },
  { path: ['plan'], summary: 'capacity planner: workers, binding limit, finish time, slack', load: async () => (await import('./commands/plan.ts')).plan },
];

export const USAGE = `Usage: npm run beton -- <command> [options]

Commands:
${commands.map((c) => `  ${c.path.join(' ').padEnd(14)} ${c.summary}`).join('\n')}

Every command takes --help. The database is the one \`npm start\` uses with the same settings:
DATABASE_URL; else the embedded PostgreSQL in BETON_DATA_DIR; else the database of an \`npm start\`
running now; else the embedded PostgreSQL in .beton/postgres. Pending migrations are applied first.`;

function groupUsage(group: string): string {
  const inGroup = commands.filter((c) => c.path[0] === group);
  return `Usage: npm run beton -- ${group} <command> [options]\n\nCommands:\n${inGroup.map((c) => `  ${c.path.join(' ').padEnd(14)} ${c.summary}`).join('\n')}`;
}

/** Runs the CLI on `argv` (without node and the script); returns the exit code. Never throws. */
export async function runCli(argv: string[], io: Output = stdio): Promise<number> {
  const words = argv.filter((a) => !a.startsWith('-'));
  if (argv.length === 0 || ((argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') && argv.length === 1)) {
    io.out(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  const entry = commands.find((c) => c.path.every((w, i) => argv[i] === w));
  if (!entry) {
    const group = commands.some((c) => c.path.length > 1 && c.path[0] === argv[0]) ? argv[0]! : undefined;
    if (group && (argv[1] === undefined || argv[1] === '--help' || argv[1] === '-h')) {
      io.out(groupUsage(group));
      return argv[1] === undefined ? 2 : 0;
    }
    io.err(`beton: unknown command "${(group ? words.slice(0, 2) : words.slice(0, 1)).join(' ') || argv[0]}"`);
    io.err('');
    io.err(group ? groupUsage(group) : USAGE);
    return 2;
  }
  let command: Command | undefined;
  try {
    command = await entry.load();
    return await command.run(argv.slice(entry.path.length), io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`beton ${entry.path.join(' ')}: ${error.message}`);
      if (error.usage) io.err(`\n${error.usage}`);
      return 2;
    }
    if (error instanceof CliError) {
      io.err(`beton ${entry.path.join(' ')}: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof DatabaseUnreachableError) {
      io.err(`beton: ${error.message}`);
      return 1;
    }
    const e = error as Error;
    io.err(`beton ${entry.path.join(' ')}: unexpected error: ${e?.stack ?? e}`);
    return 1;
  }
}

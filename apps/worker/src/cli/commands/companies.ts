import { AppError, createCompany, listCompanies } from '@beton/dashboard';
import { CliError, cliActor, parse, UsageError, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';
import { formatTable } from '../table.ts';

const createHelp = `Usage: beton companies create --name <name> [--time-zone <IANA zone>] [--schedule <cron>] [--deadline HH:MM] [--reply-to <email>] [--protect-slips]

Creates a company, as an admin does at /admin/companies (the same checks); its HR managers are
then created with \`beton users create --role HR --company <name>\`. Audited as cli:<your user>.

Options:
  --name <name>        the company's name (required, unique)
  --time-zone <zone>   IANA time zone of its schedule and deadline (default Asia/Dhaka)
  --schedule <cron>    payroll schedule, 5 cron fields in that zone (default "0 2 1 * *")
  --deadline <HH:MM>   local time by which every slip must be delivered (default 09:00)
  --reply-to <email>   Reply-To of the company's emails (default: none)
  --protect-slips      password-protected slips (docs/pdf.md)
  -h, --help           this help`;

export const companiesCreate: Command = {
  path: ['companies', 'create'],
  summary: 'a company with its time zone and payroll schedule',
  help: createHelp,
  async run(argv, io) {
    const { values } = parse(
      argv,
      {
        name: { type: 'string' },
        'time-zone': { type: 'string' },
        schedule: { type: 'string' },
        deadline: { type: 'string' },
        'reply-to': { type: 'string' },
        'protect-slips': { type: 'boolean' },
      },
      createHelp,
    );
    if (values.help) return (io.out(createHelp), 0);
    if (!values.name) throw new UsageError('--name is required', createHelp);
    const created = await usingDatabase(async (db) => {
      try {
        return await createCompany(
          db.pool,
          {
            name: values.name!,
            ...(values['time-zone'] ? { timeZone: values['time-zone'] } : {}),
            ...(values.schedule ? { payrollSchedule: values.schedule } : {}),
            ...(values.deadline ? { deadline: values.deadline } : {}),
            ...(values['reply-to'] ? { replyToEmail: values['reply-to'] } : {}),
            protectSlips: values['protect-slips'] === true,
          },
          cliActor(),
        );
      } catch (error) {
        if (error instanceof AppError)
          throw new CliError(
            Object.entries(error.fieldErrors ?? {})
              .map(([k, v]) => `${k}: ${v}`)
              .join('; ') || error.message,
          );
        throw error;
      }
    }, io.err);
    io.out(
      `Created company ${created.name} (${created.id}): ${created.timeZone}, payroll "${created.payrollSchedule}", slips by ${created.deadline}${created.protectSlips ? ', password-protected slips' : ''}.`,
    );
    io.out(`Next: beton users create --role HR --company "${created.name}" --email <address>`);
    return 0;
  },
};

const listHelp = `Usage: beton companies list [--json]

Every company: time zone, payroll schedule, deadline, protected slips, employees and HR users.`;

export const companiesList: Command = {
  path: ['companies', 'list'],
  summary: 'companies with schedule, settings, employees and HR users [--json]',
  help: listHelp,
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' } }, listHelp);
    if (values.help) return (io.out(listHelp), 0);
    const companies = await usingDatabase((db) => listCompanies(db.pool), io.err);
    if (values.json) return (io.out(JSON.stringify(companies)), 0);
    for (const line of formatTable(
      ['name', 'id', 'time zone', 'schedule', 'deadline', 'protected slips', 'employees', 'HR users'],
      companies.map((c) => [c.name, c.id, c.timeZone, c.payrollSchedule, c.deadline, c.protectSlips ? 'yes' : '-', String(c.employees), String(c.hrUsers)]),
    ))
      io.out(line);
    return 0;
  },
};

import { findCompany } from '@beton/dashboard/companies';
import { createUser, listUsers, UserInputError } from '@beton/db';
import { CliError, cliActor, parse, UsageError, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';
import { formatTable } from '../table.ts';

const createHelp = `Usage: beton users create --email <address> --role HR|ADMIN [--company <id or exact name>] [--name <name>]

Creates a user who signs in to the dashboard with email + password. Prints a one-time
password (from the operating system's cryptographic source; only its argon2id hash is
stored): hand it over; the dashboard makes the user choose their own at the first sign-in.
An HR manager belongs to exactly one company; an admin to none. Audited as cli:<your user>.

Options:
  --email <address>   the user's sign-in email (required)
  --role <role>       HR or ADMIN (required)
  --company <c>       the HR manager's company: its id, or its exact name
  --name <name>       shown in the dashboard (default: "HR, <company>" or "Platform admin")
  -h, --help          this help`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const usersCreate: Command = {
  path: ['users', 'create'],
  summary: 'a dashboard user with a one-time password',
  help: createHelp,
  async run(argv, io) {
    const { values } = parse(argv, { email: { type: 'string' }, role: { type: 'string' }, company: { type: 'string' }, name: { type: 'string' } }, createHelp);
    if (values.help) return (io.out(createHelp), 0);
    if (!values.email) throw new UsageError('--email is required', createHelp);
    const role = values.role?.toUpperCase();
    if (role !== 'HR' && role !== 'ADMIN') throw new UsageError(`--role must be HR or ADMIN${values.role ? `, got "${values.role}"` : ''}`, createHelp);
    if (role === 'HR' && !values.company) throw new UsageError('an HR manager belongs to one company: give --company <id or name>', createHelp);
    if (role === 'ADMIN' && values.company) throw new UsageError('an admin belongs to no company: leave out --company', createHelp);
    const created = await usingDatabase(async (db) => {
      let company: { id: string; name: string } | undefined;
      if (values.company) {
        company = (await findCompany(db.pool, values.company)) ?? undefined;
        if (!company) throw new CliError(`No company ${UUID.test(values.company) ? 'with id' : 'named'} "${values.company}"`);
      }
      const name = values.name ?? (company ? `HR, ${company.name}` : 'Platform admin');
      try {
        return { ...(await createUser(db.pool, { email: values.email!, name, role, ...(company ? { companyId: company.id } : {}) }, cliActor())), company };
      } catch (error) {
        if (error instanceof UserInputError) throw new CliError(error.message);
        throw error;
      }
    }, io.err);
    io.out(`Created ${created.role} ${created.email}${created.company ? ` for ${created.company.name}` : ''}.`);
    io.out(`One-time password (shown only now; it must be changed at the first sign-in): ${created.oneTimePassword}`);
    return 0;
  },
};

const listHelp = `Usage: beton users list [--json]

Every dashboard user: role, company, whether a one-time password is still to be changed, live sessions.`;

export const usersList: Command = {
  path: ['users', 'list'],
  summary: 'dashboard users with role, company and live sessions [--json]',
  help: listHelp,
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' } }, listHelp);
    if (values.help) return (io.out(listHelp), 0);
    const users = await usingDatabase((db) => listUsers(db.pool), io.err);
    if (values.json) return (io.out(JSON.stringify(users)), 0);
    for (const line of formatTable(
      ['email', 'role', 'company', 'one-time password', 'sessions'],
      users.map((u) => [u.email, u.role, u.companyName ?? '-', u.mustChangePassword ? 'yes' : '-', String(u.activeSessions)]),
    ))
      io.out(line);
    return 0;
  },
};

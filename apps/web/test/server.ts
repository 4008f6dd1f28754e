/**
 * Builds the web app at most once per source change (a mkdir lock keeps two test files from
 * building at the same time) and starts `next start` on a free port for one test file.
 */
import { freePort } from '@beton/db';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');
const webDir = path.join(root, 'apps/web');
const buildId = path.join(webDir, '.next/BUILD_ID');
const lockDir = path.join(webDir, '.next-build.lock');
const nextBin = path.join(root, 'node_modules/next/dist/bin/next');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === '.next' || entry.name === 'generated' || entry.name === 'test') continue;
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function isFresh(): boolean {
  if (!existsSync(buildId)) return false;
  const sources = [
    'apps/web',
    'packages/config/src',
    'packages/dashboard/src',
    'packages/jobs/src',
    'packages/db/src',
    'packages/payroll/src',
    'packages/people/src',
  ].map((d) => newestMtime(path.join(root, d)));
  return statSync(buildId).mtimeMs > Math.max(...sources);
}

export async function ensureBuilt(): Promise<void> {
  for (;;) {
    if (isFresh()) return;
    try {
      mkdirSync(lockDir);
    } catch {
      // Another test file is building; a lock older than 5 minutes is a crashed build.
      if (Date.now() - statSync(lockDir).mtimeMs > 300_000) rmSync(lockDir, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      if (isFresh()) return;
      for (let waited = 0; ; waited += 2_000) {
        // From the app's folder, as turbo runs it: next-intl's plugin finds ./src/i18n/request.ts from there.
        const run = spawnSync(process.execPath, [nextBin, 'build', webDir], {
          cwd: webDir,
          encoding: 'utf8',
          env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
        });
        if (run.status === 0) return;
        // A build started outside this test run (turbo, another suite) holds Next's own lock: wait for it.
        if (`${run.stdout}${run.stderr}`.includes('Another next build process is already running') && waited < 180_000) {
          await new Promise((r) => setTimeout(r, 2_000));
          continue;
        }
        throw new Error(`next build failed:\n${run.stdout}\n${run.stderr}`);
      }
    } finally {
      rmSync(lockDir, { recursive: true, force: true });
    }
  }
}

export interface WebServer {
  url: string;
  /** Everything the server printed so far (its JSON log lines). */
  output(): string;
  stop(): Promise<void>;
}

/** A webhook key pair of the tests' own: production requires SENDGRID_WEBHOOK_PUBLIC_KEY. */
export const testWebhookKeys = (() => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };
})();

export interface WebServerOptions {
  /** More settings of apps/web/src/env.ts (TRUSTED_PROXIES, METRICS_TOKEN, …). */
  env?: Record<string, string>;
}

export async function startWebServer(databaseUrl: string, options: WebServerOptions = {}): Promise<WebServer> {
  await ensureBuilt();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // vitest sets TEST=true, which would put Better Auth in its test mode: run as in production.
  const { TEST: _test, ...parentEnv } = process.env;
  const child: ChildProcess = spawn(process.execPath, [nextBin, 'start', webDir, '-p', String(port), '-H', '127.0.0.1'], {
    cwd: root,
    env: {
      ...parentEnv,
      DATABASE_URL: databaseUrl,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      PORT: String(port),
      // Production requires both: a fresh random secret per server, and the URL tests call.
      BETTER_AUTH_SECRET: randomBytes(32).toString('base64'),
      BETTER_AUTH_URL: url,
      SENDGRID_WEBHOOK_PUBLIC_KEY: testWebhookKeys.publicKey,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited early:\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`next start did not answer /api/health within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, output: () => output, stop };
}

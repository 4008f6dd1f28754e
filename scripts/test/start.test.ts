/**
 * `npm start` as a newcomer runs it: no DATABASE_URL, so an embedded PostgreSQL under a
 * data folder; demo data on first start; the dashboard answers HTTP 200; Ctrl-C (SIGTERM)
 * stops every process and the database; a second start reuses the data.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../apps/web/test/server.ts';
import { repoRoot, spawnNode, stopAll } from '../lib/processes.ts';

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

/** Running (a zombie waiting to be reaped by init has already exited). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
  });

async function startOnce() {
  const proc = spawnNode({ name: 'npm-start', args: ['--import', 'tsx', path.join(repoRoot, 'scripts/start.ts')], env, readyWhen: /"msg":"beton ready"/, readyTimeoutMs: 300_000 });
  await proc.ready;
  const ready = JSON.parse(proc.lines.find((l) => l.includes('"msg":"beton ready"'))!) as { url: string; database: string };
  return { proc, ready };
}

describe('npm start', () => {
  // The web build is shared with the web tests (built once, under a lock).
  beforeAll(() => ensureBuilt(), 300_000);

  afterAll(async () => {
    await stopAll(10_000);
    rmSync(dataRoot, { recursive: true, force: true });
  });

  it('starts on an embedded PostgreSQL, seeds, serves the dashboard, and stops everything on SIGTERM', async () => {
    const { proc, ready } = await startOnce();
    expect(proc.lines.join('\n')).toMatch(/seeded in .* Logins/);
    expect(proc.lines.join('\n')).toMatch(/ADMIN admin@beton\.example {2}password: \S+/);
    const health = await fetch(`${ready.url}/api/health`);
    expect(health.status).toBe(200);
    const login = await fetch(`${ready.url}/login`);
    expect(login.status).toBe(200);
    // The printed admin login signs in (Better Auth, argon2id hash from the seed).
    const [, email, password] = proc.lines.join('\n').match(/ADMIN (\S+) {2}password: (\S+)/)!;
    const signIn = await fetch(`${ready.url}/api/auth/sign-in/email`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: ready.url }, body: JSON.stringify({ email, password }),
    });
    expect(signIn.status).toBe(200);
    expect(((await signIn.json()) as { user: { role: string } }).user.role).toBe('ADMIN');
    const dbPort = Number(new URL(ready.database).port);
    expect(await portOpen(dbPort)).toBe(true);
    const { stdout } = await import('node:child_process').then((cp) => ({ stdout: cp.execSync(`pgrep -P ${proc.pid} || true`).toString() }));
    const children = stdout.split('\n').filter(Boolean).map(Number);
    expect(children.length).toBeGreaterThanOrEqual(4); // scheduler, pdf-render, send-email, web

    proc.signal('SIGTERM');
    const exit = await proc.exited;
    expect(exit.code).toBe(0);
    for (let i = 0; i < 50 && children.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    expect(children.filter(alive).map((pid) => `${pid}: ${(() => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return 'gone'; } })()}`)).toEqual([]);
    expect(await portOpen(dbPort)).toBe(false);
  }, 400_000);

  it('reuses the embedded data on the next start (no second seed)', async () => {
    const { proc, ready } = await startOnce();
    expect(proc.lines.join('\n')).not.toMatch(/seeding/);
    expect((await fetch(`${ready.url}/api/health`)).status).toBe(200);
    proc.signal('SIGTERM');
    expect((await proc.exited).code).toBe(0);
  }, 400_000);
});

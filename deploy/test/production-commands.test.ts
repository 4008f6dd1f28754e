/**
 * What ships is what is tested: every command line the image runs — read from the
 * Dockerfile, docker-compose.yml and the Kubernetes manifests, not restated here — started
 * as they start it (NODE_ENV=production, the ConfigMap's settings, the image's ENV, the
 * secrets), on a small payroll run. Each process then gets SIGTERM while jobs are in flight
 * and must exit 0, leaving nothing locked: no job `running`, no graphile-worker lock, no
 * limiter slot or lease held, every worker recorded as stopped. Bad input too: a missing or
 * malformed setting stops a program with one line per setting; a damaged build stops it with
 * one line saying to run the build.
 */
import { createDatabaseIfMissing, createTestDatabase, dropDatabase, seedDatabase, withDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ensureBuilt, testWebhookKeys } from '../../apps/web/test/server.ts';
import { repoRoot, spawnNode, stopAll, type Managed } from '../../scripts/lib/processes.ts';
import { countLockedQueues, countWakeups } from '@beton/jobs/wakeups';

const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');
const compose = parse(read('docker-compose.yml')) as { services: Record<string, { command?: string[]; environment?: Record<string, string> }> };
const k8s = [
  'deploy/k8s/config.yaml',
  'deploy/k8s/scheduler.yaml',
  'deploy/k8s/worker-pdf.yaml',
  'deploy/k8s/worker-email.yaml',
  'deploy/k8s/web.yaml',
  'deploy/k8s/migrate-job.yaml',
]
  .flatMap((f) => parseAllDocuments(read(f)).map((d) => d.toJS()))
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects of many kinds, read field by field
  .filter(Boolean) as Array<{ kind: string; metadata: { name: string }; data?: Record<string, string>; spec: any }>;
const configMap = k8s.find((o) => o.kind === 'ConfigMap')!.data!;
const podContainer = (name: string) =>
  k8s.find((o) => o.metadata.name === name)!.spec.template.spec.containers[0] as { args: string[]; env?: Array<{ name: string; value?: string }> };
const podEnv = (name: string) => Object.fromEntries((podContainer(name).env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));

/** The runtime stage's ENV and CMD. */
const dockerfile = read('Dockerfile').replace(/\\\n\s*/g, ' ');
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const imageEnv = Object.fromEntries(
  [...runtimeStage.matchAll(/^ENV (.+)$/gm)].flatMap((m) =>
    m[1]!
      .trim()
      .split(/\s+/)
      .map((kv) => kv.split('=') as [string, string]),
  ),
);
const imageCmd = JSON.parse(/^CMD (.+)$/m.exec(runtimeStage)![1]!) as string[];

/** A production command line from the manifests, started in the repository as the image's WORKDIR. */
function start(name: string, command: readonly string[], env: Record<string, string>, readyWhen?: RegExp): Managed {
  expect(command[0], `${name} runs node`).toBe('node');
  return spawnNode({
    name,
    args: command.slice(1),
    env: { ...env, TEST: undefined, VITEST: undefined },
    ...(readyWhen ? { readyWhen, readyTimeoutMs: 120_000 } : {}),
  });
}

describe('production command lines', () => {
  let db: TestDatabase;
  let production: Record<string, string>;
  const processes: Record<string, Managed> = {};

  beforeAll(async () => {
    db = await createTestDatabase('prodcmd');
    await seedDatabase(db.pool, { employees: 24, companies: 2, invalidRate: 0, seed: 7 });
    production = {
      ...imageEnv,
      ...configMap,
      // Secrets and this machine's endpoints; every process below gets the same.
      DATABASE_URL: db.url,
      SENDGRID_API_KEY: 'SG.prodcmd',
      // the simulator's verified Sender Identity (the send-email worker's preflight checks it)
      EMAIL_FROM: 'payroll@beton.example',
      SENDGRID_WEBHOOK_PUBLIC_KEY: testWebhookKeys.publicKey,
      BANK_API_KEY: 'bank-prodcmd',
      BETTER_AUTH_SECRET: randomBytes(32).toString('base64'),
      // Free ports instead of the image's fixed ones (other tests run beside this one).
      HEALTH_PORT: '0',
      LOG_LEVEL: 'info',
    };
  }, 120_000);

  afterAll(async () => {
    await stopAll(10_000);
    await db?.drop();
  });

  it('the Dockerfile, compose and Kubernetes name the same commands', () => {
    expect(imageCmd).toEqual(compose.services.scheduler!.command);
    for (const [service, pod] of [
      ['scheduler', 'scheduler'],
      ['worker-pdf', 'worker-pdf'],
      ['worker-email', 'worker-email'],
      ['migrate', 'beton-migrate'],
    ] as const) {
      expect(podContainer(pod).args, service).toEqual(compose.services[service]!.command);
    }
    expect(podContainer('web').args).toEqual(compose.services.web!.command);
    expect(imageEnv.NODE_ENV).toBe('production');
  });

  it('migrate: applies every migration to an empty database and exits 0', async () => {
    const server = new URL(db.url);
    const name = `beton_prodcmd_migrate_${process.pid}`;
    const serverUrl = withDatabase(server.toString(), 'postgres');
    await createDatabaseIfMissing(serverUrl, name);
    try {
      // The image runs Prisma's native engine; this machine cannot fetch it, so the stand-in
      // is chosen explicitly, as docs/operations.md says for such machines.
      const migrate = start('migrate', compose.services.migrate!.command!, {
        ...production,
        DATABASE_URL: withDatabase(serverUrl, name),
        BETON_SCHEMA_ENGINE: 'wasm',
      });
      const exit = await migrate.exited;
      expect(exit, migrate.lines.join('\n')).toEqual({ code: 0, signal: null });
      const client = new pg.Client({ connectionString: withDatabase(serverUrl, name) });
      await client.connect();
      const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from _prisma_migrations where finished_at is not null`);
      await client.end();
      expect(rows[0]!.n).toBe(readdirSync(path.join(repoRoot, 'prisma/migrations'), { withFileTypes: true }).filter((d) => d.isDirectory()).length);
    } finally {
      await dropDatabase(serverUrl, name);
    }
  }, 180_000);

  it('simulators, workers and the web app start; on SIGTERM with jobs in flight each exits 0 and nothing stays locked', async () => {
    await ensureBuilt();
    // Demo profile: the simulators on free ports, slow enough that emails are in flight at SIGTERM.
    const provider = start(
      'provider',
      compose.services.provider!.command!,
      { ...production, PORT: '0', PROVIDER_API_KEY: production.SENDGRID_API_KEY!, PROVIDER_LATENCY_MS: '1500', PROVIDER_LATENCY_SPREAD_MS: '0' },
      /listening on/,
    );
    const bank = start('bank', compose.services.bank!.command!, { ...production, PORT: '0', BANK_API_KEY: production.BANK_API_KEY! }, /listening on/);
    await Promise.all([provider.ready, bank.ready]);
    const url = (m: Managed) => /listening on (http:\/\/\S+)/.exec(m.lines.join('\n'))![1]!;
    const env = { ...production, SENDGRID_BASE_URL: url(provider), BANK_API_URL: url(bank) };

    for (const [service, pod] of [
      ['scheduler', 'scheduler'],
      ['worker-pdf', 'worker-pdf'],
      ['worker-email', 'worker-email'],
    ] as const) {
      processes[service] = start(
        service,
        compose.services[service]!.command!,
        { ...env, ...podEnv(pod), WORKER_ID: `prodcmd-${service}` },
        /"msg":"worker ready"/,
      );
    }
    const webPort = String(20_000 + (process.pid % 20_000));
    const webCommand = compose.services.web!.command!.map((a, i, all) => (all[i - 1] === '-p' ? webPort : a));
    processes.web = start(
      'web',
      [...webCommand, '-H', '127.0.0.1'],
      { ...env, PORT: webPort, BETTER_AUTH_URL: `http://127.0.0.1:${webPort}` },
      /Ready in|started server|Local:/,
    );
    await Promise.all(Object.values(processes).map((p) => p.ready));
    expect((await fetch(`http://127.0.0.1:${webPort}/api/health`)).status).toBe(200);

    // A small payroll run: 24 slips, emails held 1.5 s at the provider.
    const jobs = createJobClient(db.pool, jobDefinitions) as unknown as JobClient<BetonJobs>;
    await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'prodcmd' }, '2026-11');
    const inFlight = async () =>
      (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where status = 'running' and task_name = 'send-slip-email'`)).rows[0]!.n;
    for (let i = 0; i < 200 && (await inFlight()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await inFlight()).toBeGreaterThan(0);

    const all = { ...processes, provider, bank };
    const exits = await Promise.all(
      Object.entries(all).map(async ([name, p]) => {
        p.signal('SIGTERM');
        const killer = setTimeout(() => p.signal('SIGKILL'), 30_000);
        const exit = await p.exited;
        clearTimeout(killer);
        return [name, exit.code, exit.signal] as const;
      }),
    );
    // next start closes its server and then exits 128 + 15 on SIGTERM by design
    // (next/dist/server/lib/start-server.js: "signal-based exit code"); every Beton program exits 0.
    expect(exits).toEqual(Object.keys(all).map((name) => [name, name === 'web' ? 143 : 0, null]));

    const one = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;
    expect(await one(`select count(*)::int as n from jobs where status = 'running'`)).toBe(0);
    expect(await one(`select count(*)::int as n from job_attempts where finished_at is null`)).toBe(0);
    expect(await countWakeups(db.pool, { locked: true })).toBe(0);
    expect(await countLockedQueues(db.pool)).toBe(0);
    expect(await one(`select count(*)::int as n from limiter_slots where holder is not null and expires_at > now()`)).toBe(0);
    expect(await one(`select count(*)::int as n from locks where expires_at > now()`)).toBe(0);
    expect(await one(`select count(*)::int as n from workers where id like 'prodcmd-%' and stopped_at is null`)).toBe(0);
    expect(await one(`select count(*)::int as n from workers where id like 'prodcmd-%'`)).toBe(3);
  }, 300_000);

  it('a missing or malformed setting: one line per setting, exit 1, for the workers and the web app', async () => {
    const worker = start('worker-missing', compose.services['worker-email']!.command!, {
      ...imageEnv,
      ...configMap,
      HEALTH_PORT: '0',
      DATABASE_URL: 'not a url',
      SENDGRID_API_KEY: '',
      EMAIL_FROM: '',
      BANK_API_URL: '',
      BANK_API_KEY: '',
    });
    expect((await worker.exited).code).toBe(1);
    expect(worker.lines).toEqual([
      'beton-worker: DATABASE_URL: DATABASE_URL must be a postgres:// URL',
      expect.stringMatching(/^beton-worker: SENDGRID_API_KEY: required when NODE_ENV=production/),
      expect.stringMatching(/^beton-worker: EMAIL_FROM: required when NODE_ENV=production/),
      expect.stringMatching(/^beton-worker: BANK_API_URL: required when NODE_ENV=production/),
      expect.stringMatching(/^beton-worker: BANK_API_KEY: required when NODE_ENV=production/),
    ]);

    await ensureBuilt();
    const webPort = String(20_000 + ((process.pid + 7) % 20_000));
    const webCommand = compose.services.web!.command!.map((a, i, all) => (all[i - 1] === '-p' ? webPort : a));
    const web = start('web-missing', [...webCommand, '-H', '127.0.0.1'], {
      ...imageEnv,
      ...configMap,
      DATABASE_URL: db.url,
      BETTER_AUTH_SECRET: 'short',
      BETTER_AUTH_URL: '',
    });
    const exit = await Promise.race([web.exited, new Promise<{ code: null }>((r) => setTimeout(() => r({ code: null }), 60_000))]);
    web.signal('SIGKILL');
    expect(exit.code, web.lines.join('\n')).toBe(1);
    expect(web.lines.filter((l) => l.startsWith('beton-web: '))).toEqual([
      'beton-web: BETTER_AUTH_SECRET: BETTER_AUTH_SECRET must be at least 32 characters (openssl rand -base64 32)',
      expect.stringMatching(/^beton-web: BETTER_AUTH_URL: required when NODE_ENV=production/),
      expect.stringMatching(/^beton-web: SENDGRID_WEBHOOK_PUBLIC_KEY: required when NODE_ENV=production/),
    ]);
  }, 120_000);

  it('a missing, partial or damaged build: one line saying to run the build, exit 1, no stack trace', () => {
    // A copy of bin/ and dist/, so the build the other tests use stays whole.
    const dir = mkdtempSync(path.join(tmpdir(), 'beton-build-'));
    try {
      cpSync(path.join(repoRoot, 'bin'), path.join(dir, 'bin'), { recursive: true });
      const run = () =>
        spawnSync(process.execPath, [path.join(dir, 'bin/beton.mjs'), 'worker', '--queue', 'send-email'], {
          encoding: 'utf8',
          env: { ...process.env, NODE_ENV: 'production' },
        });
      const refused = (r: ReturnType<typeof run>, why: RegExp) => {
        expect(r.status).toBe(1);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(why);
        expect(r.stderr).toMatch(/run `npm run build`/);
      };
      refused(run(), /Beton is not built \(dist\/manifest\.json is missing\)/);
      cpSync(path.join(repoRoot, 'dist'), path.join(dir, 'dist'), { recursive: true });
      rmSync(path.join(dir, 'dist/render-thread.js'));
      refused(run(), /incomplete \(dist\/render-thread\.js is missing\)/);
      cpSync(path.join(repoRoot, 'dist/render-thread.js'), path.join(dir, 'dist/render-thread.js'));
      appendFileSync(path.join(dir, 'dist/worker.js'), '\n}}}');
      refused(run(), /damaged \(dist\/worker\.js does not match dist\/manifest\.json\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

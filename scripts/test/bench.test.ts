/**
 * The benches at a tiny size (each prints a valid `--json` line last), and the capacity planner
 * against a measured run: the bench's own per-slip costs, fed to the planner with the bench's
 * deployment (one machine, one process of each kind), predict its wall time within 20 %.
 */
import { predictRun, parseCosts } from '@beton/payroll/capacity';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'beton-bench-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function runScript(script: string, args: string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = path.join(root, 'node_modules/tsx/dist/cli.mjs');
  // The benches start their own embedded PostgreSQL: DATABASE_URL (the tests' server) is not theirs.
  const { DATABASE_URL: _db, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [tsx, script, ...args], { cwd: root, env, timeout: timeoutMs, maxBuffer: 32 * 2 ** 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('npm run bench (the pipeline, measured) and the planner', () => {
  it('prints CPU per slip by process kind and its binding stage, and the planner predicts its wall time within 20 %', async () => {
    const costsFile = path.join(tmp, 'costs.json');
    const N = 400;
    const run = await runScript(
      'scripts/bench.ts',
      ['--employees', String(N), '--provider-rate', '40', '--no-web', '--naive-sample', '1', '--costs', costsFile, '--json'],
      420_000,
    );
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`).toBe(0);
    const out = lastJson(run.stdout);
    expect(out.employees).toBe(N);
    expect(out.stuck).toBe(0);
    expect(out.provider429).toBe(0);
    expect(['email', 'render', 'database']).toContain(out.binding);
    const byKind = out.cpuMsPerSlipByKind as Record<string, number>;
    for (const kind of ['render', 'email', 'scheduler', 'postgres']) expect(byKind[kind], kind).toBeGreaterThan(0);
    expect(out.cpuMsPerSlip as number).toBeGreaterThan(byKind.render!);
    // PostgreSQL's share by process (the bench's embedded server runs on this machine): the
    // client backends do work, and the living processes' roles, each counted once, fit in the
    // whole (`exited` is the remainder, so a process counted twice would make it negative).
    const byRole = out.postgresCpuMsPerSlipByRole as Record<'backends' | 'autovacuum' | 'server' | 'exited', number>;
    expect(byRole.backends).toBeGreaterThan(0);
    expect(byRole.backends + byRole.autovacuum + byRole.server).toBeLessThanOrEqual(byKind.postgres! + 0.02);
    expect(byRole.exited).toBeGreaterThanOrEqual(-0.02);
    expect(run.stdout).toMatch(/PostgreSQL by process .*client backends [\d.]+, autovacuum [\d.]+/);
    expect(out.statementsPerSlip as number).toBeGreaterThan(1);
    expect(run.stdout).toMatch(/CPU ms per slip .*render [\d.]+, email [\d.]+, scheduler [\d.]+, postgres [\d.]+/);

    const costs = parseCosts(JSON.parse(readFileSync(costsFile, 'utf8')), costsFile);
    const predicted = predictRun(costs, {
      employees: N,
      providerRate: 40,
      cores: costs.machine.cores,
      othersCores: costs.machine.othersCores ?? 0,
      renderThreads: costs.renderThreads,
      renderJobsPerThread: costs.renderJobsPerThread ?? 1,
      emailConcurrency: costs.emailConcurrency,
    });
    const error = Math.abs(predicted.wallSeconds - costs.wallSeconds) / costs.wallSeconds;
    expect(
      error,
      `predicted ${predicted.wallSeconds.toFixed(1)} s (${predicted.binding}: ${JSON.stringify(predicted.limits)}), measured ${costs.wallSeconds} s`,
    ).toBeLessThanOrEqual(0.2);
  }, 480_000);
});

describe('npm run bench:scale at a tiny size', () => {
  it('prints every figure against its target and a valid JSON line', async () => {
    const run = await runScript(
      'scripts/bench-scale.ts',
      ['--employees', '2000', '--companies', '4', '--compare-at', '200', '--reps', '2', '--workers-seconds', '0', '--json'],
      420_000,
    );
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`).toBe(0);
    const out = lastJson(run.stdout);
    expect(out.employees).toBe(2000);
    for (const k of [
      'fanoutSeconds',
      'hrProgressMs',
      'employeesPageMs',
      'adminFailedMs',
      'adminQueuesMs',
      'adminWorkersMs',
      'sweepMs',
      'bankPollWindowMs',
      'dbMbPer10kEmployeeMonth',
    ]) {
      expect(out[k], k).toBeGreaterThan(0);
    }
    expect((out.compare as { employees: number }).employees).toBe(200);
    expect(run.stdout).toMatch(/HR progress: one run .* ≤ 20 /);
  }, 480_000);
});

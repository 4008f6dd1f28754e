/**
 * `npm run bench:peers` at a tiny size, one round: the table and the last `--json` line's shape
 * (each queue's median, range and ratio to raw graphile-worker in the same round), and each
 * queue ran and finished exactly its jobs. BullMQ runs on the machine's Redis (REDIS_URL, as
 * the limiter tests use it), and is skipped with a line saying why when REDIS_URL is not set.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const JOBS = 300;

function benchPeers(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = path.join(root, 'node_modules/tsx/dist/cli.mjs');
  // The bench starts its own embedded PostgreSQL: DATABASE_URL (the tests' server) is not its.
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...base } = process.env;
  const merged = Object.fromEntries(Object.entries({ ...base, ...env }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tsx, 'scripts/bench-peers.ts', ...args],
      { cwd: root, env: merged, timeout: 240_000, maxBuffer: 8 * 2 ** 20 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

interface Spread {
  median: number;
  min: number;
  max: number;
}
interface PeerSummary {
  label: string;
  keeps: string;
  jobsPerSecond: Spread;
  ratioToRaw: Spread;
  rounds: Array<{ jobsPerSecond: number; ratioToRaw: number; enqueueSeconds: number; drainSeconds: number; handled: number; finished: number }>;
}
interface PeersJson {
  jobs: number;
  rounds: number;
  concurrency: number;
  localQueue: number;
  postgres: string;
  redis?: string;
  peers: Record<string, PeerSummary>;
  skipped: Record<string, string>;
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as PeersJson;

function expectDrainedExactly(out: PeersJson, ids: string[]) {
  expect(Object.keys(out.peers).sort()).toEqual([...ids].sort());
  for (const id of ids) {
    const peer = out.peers[id]!;
    expect(peer.rounds, id).toHaveLength(1);
    const [round] = peer.rounds;
    // Each job handled once and finished once, as the queue itself records it.
    expect(round!.handled, `${id} handled`).toBe(JOBS);
    expect(round!.finished, `${id} finished`).toBe(JOBS);
    expect(round!.jobsPerSecond, id).toBeGreaterThan(0);
    expect(round!.enqueueSeconds + round!.drainSeconds, id).toBeGreaterThan(0);
    for (const spread of [peer.jobsPerSecond, peer.ratioToRaw]) {
      expect(spread.min, id).toBeLessThanOrEqual(spread.median);
      expect(spread.median, id).toBeLessThanOrEqual(spread.max);
    }
    expect(peer.jobsPerSecond.median, id).toBe(round!.jobsPerSecond);
    expect(peer.ratioToRaw.median, id).toBeCloseTo(round!.jobsPerSecond / out.peers['graphile-worker']!.rounds[0]!.jobsPerSecond, 2);
  }
  expect(out.peers['graphile-worker']!.ratioToRaw).toEqual({ median: 1, min: 1, max: 1 });
}

describe('npm run bench:peers at a tiny size', () => {
  it("runs Beton's engine, raw graphile-worker, BullMQ and pg-boss on one workload, each draining exactly its jobs", async () => {
    const run = await benchPeers(['--jobs', String(JOBS), '--rounds', '1', '--json'], { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`).toBe(0);
    const out = lastJson(run.stdout);
    expect(out).toMatchObject({ jobs: JOBS, rounds: 1, concurrency: 24, localQueue: 500, skipped: {} });
    expect(out.postgres).toMatch(/^\d+/);
    expect(out.redis).toMatch(/^\d+\./);
    expectDrainedExactly(out, ['beton-engine', 'graphile-worker', 'bullmq', 'pg-boss']);
    expect(out.peers.bullmq!.label).toMatch(/^BullMQ \d+\.\d+\.\d+ on Redis \d/);
    // One table: a row per queue with its rate and its ratio.
    for (const id of Object.keys(out.peers)) expect(run.stdout).toContain(out.peers[id]!.label);
    expect(run.stdout).toMatch(/queue +jobs\/s median \(range\) +÷ raw graphile-worker, same round +what a finished job keeps/);
  }, 300_000);

  it('without REDIS_URL: BullMQ skipped with a line saying why, the others measured', async () => {
    const run = await benchPeers(['--jobs', String(JOBS), '--rounds', '1', '--json'], {});
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`).toBe(0);
    const out = lastJson(run.stdout);
    expect(out.skipped.bullmq).toMatch(/REDIS_URL is not set/);
    expect(run.stdout).toMatch(/^BullMQ skipped: REDIS_URL is not set/m);
    expectDrainedExactly(out, ['beton-engine', 'graphile-worker', 'pg-boss']);
  }, 300_000);
});

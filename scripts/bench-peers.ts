/**
 * `npm run bench:peers -- [--jobs 20000] [--rounds 3] [--concurrency 24] [--local-queue 500] [--json]`
 *
 * Beton's engine beside the queues a team would choose instead, on one workload
 * (scripts/lib/queue-peers/workload.ts: no-op jobs enqueued in bulk, drained by one process with
 * `--concurrency` in flight) in interleaved rounds: each round runs every queue once, each in a
 * fresh database, starting with a different queue each round; a queue's rate is compared with
 * raw graphile-worker's in the same round, so load from other work on the machine moves both.
 * The queues (their settings and why they are fair: docs/benchmarks.md):
 * - Beton's engine (tracked jobs: a row, an attempt row per attempt, counters);
 * - raw graphile-worker, the engine Beton runs on (local queue, batched completion);
 * - BullMQ on Redis (completed jobs kept): the Redis at REDIS_URL (as the worker's limits use
 *   it); skipped, with a line saying why, when REDIS_URL is not set or no Redis answers there;
 * - pg-boss (batches of `--local-queue`, settled per job).
 * The PostgreSQL queues use one server: DATABASE_URL's, or an embedded PostgreSQL started here.
 * Prints one table, and with --json a last line: per queue its rate's median and range and its
 * ratio to raw graphile-worker in the same round.
 */
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { repoRoot } from '@beton/db';
import { runBetonEngine } from './lib/queue-peers/beton-engine.ts';
import { probeRedis, runBullmq } from './lib/queue-peers/bullmq.ts';
import { runGraphileWorker } from './lib/queue-peers/graphile-worker.ts';
import { runPgBoss } from './lib/queue-peers/pg-boss.ts';
import { fmt, type PeerResult, type Workload } from './lib/queue-peers/workload.ts';
import { openScratchServer, type ScratchServer } from './lib/scratch-server.ts';

const USAGE = 'Usage: npm run bench:peers -- [--jobs 20000] [--rounds 3] [--concurrency 24] [--local-queue 500] [--json]';
const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '24' },
    'local-queue': { type: 'string', default: '500' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const N = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const LOCAL_QUEUE = Number(values['local-queue']);
if (![N, ROUNDS, CONCURRENCY, LOCAL_QUEUE].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error(`bench:peers: --jobs, --rounds, --concurrency and --local-queue must be whole numbers >= 1\n${USAGE}`);
  process.exit(2);
}
const REDIS_URL = process.env.REDIS_URL || undefined;
const log = (line: string) => process.stderr.write(`${line}\n`);
const workload: Workload = { jobs: N, concurrency: CONCURRENCY, localQueue: LOCAL_QUEUE, log };

const version = (pkg: string) => (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

interface Peer {
  id: 'beton-engine' | 'graphile-worker' | 'bullmq' | 'pg-boss';
  label: string;
  /** What a finished job leaves behind. */
  keeps: string;
  run(server: ScratchServer, round: number): Promise<PeerResult>;
}

/** Runs `run` on a fresh database, dropped afterwards. */
async function inDatabase(db: { url: string; drop(): Promise<void> }, run: (url: string) => Promise<PeerResult>): Promise<PeerResult> {
  try {
    return await run(db.url);
  } finally {
    await db.drop();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[], digits: number) => {
  const r = (x: number) => Number(x.toFixed(digits));
  return { median: r(median(xs)), min: r(Math.min(...xs)), max: r(Math.max(...xs)) };
};

async function main() {
  const loadAtStart = os.loadavg();
  const redis = REDIS_URL ? await probeRedis(REDIS_URL) : { error: 'REDIS_URL is not set' };
  const peers: Peer[] = [
    {
      id: 'beton-engine',
      label: "Beton's engine (tracked)",
      keeps: 'job row, an attempt row per attempt, counters',
      run: (server, round) => server.database(`engine_r${round}`, { beton: true }).then((db) => inDatabase(db, (url) => runBetonEngine(url, workload))),
    },
    {
      id: 'graphile-worker',
      label: `raw graphile-worker ${version('graphile-worker')}`,
      keeps: 'nothing (row deleted)',
      run: (server, round) => server.database(`raw_r${round}`).then((db) => inDatabase(db, (url) => runGraphileWorker(url, workload))),
    },
    ...('version' in redis
      ? [
          {
            id: 'bullmq' as const,
            label: `BullMQ ${version('bullmq')} on Redis ${redis.version}`,
            keeps: 'a hash per job + the completed set',
            run: (_server: ScratchServer, round: number) => runBullmq(REDIS_URL!, `peers-${process.pid}-r${round}`, workload),
          },
        ]
      : []),
    {
      id: 'pg-boss',
      label: `pg-boss ${version('pg-boss')}`,
      keeps: 'job row (state completed)',
      run: (server, round) => server.database(`pgboss_r${round}`).then((db) => inDatabase(db, (url) => runPgBoss(url, workload))),
    },
  ];
  const skipped: Record<string, string> = {};
  if ('error' in redis) {
    skipped.bullmq = REDIS_URL
      ? `no Redis answers at ${REDIS_URL.replace(/\/\/[^@/]*@/, '//***@')} (${redis.error})`
      : 'REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379 npm run bench:peers)';
    log(`BullMQ skipped: ${skipped.bullmq}`);
  }

  const server = await openScratchServer('peers', { log });
  const results = new Map<Peer['id'], PeerResult[]>(peers.map((p) => [p.id, []]));
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // Interleaved: each round starts with the next queue, so none is always first or last.
      const order = peers.map((_, i) => peers[(i + round - 1) % peers.length]!);
      for (const peer of order) {
        log(`Round ${round}/${ROUNDS} · ${peer.label}: ${fmt(N)} no-op jobs`);
        const r = await peer.run(server, round);
        log(`  ${fmt(r.jobsPerSecond)} jobs/s (enqueue ${r.enqueueSeconds.toFixed(2)} s + run ${r.drainSeconds.toFixed(2)} s)`);
        results.get(peer.id)!.push(r);
      }
    }
  } finally {
    await server.dispose();
  }

  const raw = results.get('graphile-worker')!;
  const summary = Object.fromEntries(
    peers.map((peer) => {
      const rs = results.get(peer.id)!;
      const ratios = rs.map((r, i) => r.jobsPerSecond / raw[i]!.jobsPerSecond);
      return [
        peer.id,
        {
          label: peer.label,
          keeps: peer.keeps,
          jobsPerSecond: spread(
            rs.map((r) => r.jobsPerSecond),
            0,
          ),
          ratioToRaw: spread(ratios, 3),
          rounds: rs.map((r, i) => ({
            jobsPerSecond: Math.round(r.jobsPerSecond),
            ratioToRaw: Number(ratios[i]!.toFixed(3)),
            enqueueSeconds: Number(r.enqueueSeconds.toFixed(3)),
            drainSeconds: Number(r.drainSeconds.toFixed(3)),
            handled: r.handled,
            finished: r.finished,
          })),
        },
      ];
    }),
  );

  const loadAtEnd = os.loadavg();
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  console.log('');
  console.log(
    `bench:peers — ${fmt(N)} no-op jobs enqueued in bulk, drained by one process with ${CONCURRENCY} in flight (fetching ${LOCAL_QUEUE} at a time where the queue can), ${ROUNDS} interleaved round(s)`,
  );
  console.log(
    `PostgreSQL ${server.version} (${server.where}), ${os.availableParallelism()} cores, Node ${process.version}, load average ${load(loadAtStart)} at the start, ${load(loadAtEnd)} at the end`,
  );
  console.log('');
  const head = ['queue', 'jobs/s median (range)', '÷ raw graphile-worker, same round', 'what a finished job keeps'];
  const lines = peers.map((peer) => {
    const s = summary[peer.id]!;
    const rate = `${fmt(s.jobsPerSecond.median)} (${fmt(s.jobsPerSecond.min)}–${fmt(s.jobsPerSecond.max)})`;
    const ratio =
      ROUNDS > 1 ? `${s.ratioToRaw.median.toFixed(2)} (${s.ratioToRaw.min.toFixed(2)}–${s.ratioToRaw.max.toFixed(2)})` : s.ratioToRaw.median.toFixed(2);
    return [peer.label, rate, ratio, peer.keeps];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) =>
    cells.map((c, i) => (i === 1 || i === 2 ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  console.log(row(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(row(l));
  if (skipped.bullmq) console.log(`BullMQ skipped: ${skipped.bullmq}`);
  if (values.json) {
    console.log(
      JSON.stringify({
        jobs: N,
        rounds: ROUNDS,
        concurrency: CONCURRENCY,
        localQueue: LOCAL_QUEUE,
        postgres: server.version,
        ...('version' in redis ? { redis: redis.version } : {}),
        loadAverage: Number(loadAtStart[0]!.toFixed(2)),
        peers: summary,
        skipped,
      }),
    );
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench:peers: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
    process.exit(1);
  },
);

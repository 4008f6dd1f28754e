/**
 * `npm run drill -- [--employees N] [--json] [--fast]` — the payroll night of SPEC §8 as one
 * command (issue 7, item 1). A fresh database, N employees over up to 60 companies (1 %
 * invalid addresses), the provider and bank simulators, two schedulers, two pdf-render and
 * two send-email workers as separate processes; the monthly run is triggered through the
 * schedulers, and on a printed timeline the drill injects a provider 503 window, 429
 * pressure, lost acks, a rolling SIGTERM deploy of every worker, one SIGKILL of a worker
 * holding jobs and one render that hangs forever. Mid-run HR presses Resend twice (R13): for
 * the slip furthest back in the queue, and for an invalid address just fixed; the time until
 * each arrives at the provider is `resendLatencySeconds` (the slower one; target ≤ 60 s).
 * When nothing is queued, running or retrying it checks the simulator's message store and
 * the database, prints a report (and with --json a last line in issue 7's shape) and exits 1
 * when any check fails.
 *
 * Database faults (issue 17, `--db-faults on`, the default): from +5 s, every 10–40 s until
 * nine in ten slips are out and the timeline above is over, one of: every worker connection
 * terminated (`pg_terminate_backend`); the embedded PostgreSQL stopped and started again (the
 * second fault; on a DATABASE_URL server another termination instead); the workers' role at its
 * connection limit for 20 s (the third fault); without --fast (production settings: fsync and
 * synchronous commits on), the embedded PostgreSQL crashed — an immediate shutdown, WAL not yet
 * flushed lost, replayed on start — as the fourth (the asynchronous bookkeeping commits of the
 * slip pipeline are lost with it, the synchronous unknown mark before each request is not).
 * The workers connect as a role of their own.
 *
 * --fast shortens latencies, windows and pacing for the test suite (same faults, same checks).
 */
import { seedDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs';
import { retryOnConnectionError } from '@beton/jobs/client';
import { payrollMonthFor, resendSlip, webhookCounts } from '@beton/payroll';
import {
  isValidEmailSyntax,
  signPayload,
  SIGNATURE_HEADER,
  startBankSimulator,
  startProviderSimulator,
  TIMESTAMP_HEADER,
  type ProviderSimulator,
} from '@beton/simulators';
import { generateKeyPairSync } from 'node:crypto';
import { startWebServer } from '../apps/web/test/server.ts';
import { parseArgs } from 'node:util';
import os from 'node:os';
import { hangingRenders } from './lib/faults.ts';
import { FAST_SCHEDULING } from './lib/fast-scheduling.ts';
import {
  bar,
  exitHandling,
  freshDatabase,
  jobStory,
  readyWorkerId,
  round,
  sampleWorkerConnections,
  sleep,
  spawnWorkerSlowStart,
  waitUntil,
  type FreshDatabase,
} from './lib/drill-harness.ts';
import type { Managed } from './lib/processes.ts';
import { createWorkerRole, refuseWorkerConnections, terminateWorkerConnections } from './lib/db-faults.ts';
import { staleRunningCondition, strandedWaitingFrom, wakeupMissingCondition, RUNNING_JOBS_FROM } from '@beton/jobs';
import { lockedWakeupsCountSql } from '@beton/jobs/wakeups';

const { values: args } = parseArgs({
  options: {
    employees: { type: 'string', default: '3000' },
    json: { type: 'boolean', default: false },
    fast: { type: 'boolean', default: false },
    'keep-database': { type: 'boolean', default: false },
    'db-faults': { type: 'string', default: 'on' },
  },
});
if (args['db-faults'] !== 'on' && args['db-faults'] !== 'off') {
  process.stderr.write(`drill: --db-faults must be on or off (got ${args['db-faults']})\n`);
  process.exit(2);
}
const DB_FAULTS = args['db-faults'] === 'on';
const N = Number(args.employees);
if (!Number.isInteger(N) || N < 10) {
  process.stderr.write(`drill: --employees must be a whole number >= 10 (got ${args.employees})\n`);
  process.exit(2);
}
const FAST = args.fast;
const COMPANIES = Math.min(60, Math.max(1, Math.floor(N / 5)));
const BUDGET = 60; // SPEC R4: all workers together hold at most 60 connections
const TIME_ZONE = 'Asia/Dhaka';

/** The settings of the night; --fast keeps the faults and shortens the waits. */
const P = FAST
  ? { latencyMs: 400, spreadMs: 100, emailRate: 8, tickMs: 2000, progressMs: 1000, settleTimeoutMs: 240_000, bankCreditMs: 5_000, bankSpreadMs: 15_000 }
  : { latencyMs: 1200, spreadMs: 200, emailRate: 40, tickMs: 2000, progressMs: 2000, settleTimeoutMs: 900_000, bankCreditMs: 20_000, bankSpreadMs: 60_000 };
/** The bank poll runs every 10 s (every 15 min in production), so the credits arrive over a few polls. */
const BANK_POLL_CRON = '*/10 * * * * *';
/** Seconds after the fan-out at which each fault starts, and how long it lasts. */
const T = FAST
  ? {
      keyAt: 0,
      keyFor: 6,
      outageAt: 3,
      outageFor: 6,
      resendAt: 10,
      pressureAt: 11,
      pressureFor: 4,
      pressureRate: 1,
      lostAcksAt: 16,
      lostAcksFor: 12,
      sigkillAt: 18,
      deployAt: 22,
      hookDownAt: 8,
      hookDownFor: 5,
      hookLagAt: 14,
      hookLagFor: 8,
      floodAt: 10,
    }
  : {
      keyAt: 0,
      keyFor: 20,
      outageAt: 8,
      outageFor: 30,
      resendAt: 40,
      pressureAt: 45,
      pressureFor: 10,
      pressureRate: 10,
      lostAcksAt: 58,
      lostAcksFor: 25,
      sigkillAt: 62,
      deployAt: 72,
      hookDownAt: 30,
      hookDownFor: 20,
      hookLagAt: 55,
      hookLagFor: 20,
      floodAt: 40,
    };
/**
 * The Event Webhook posts every 1 s (SendGrid: 30 s), 5 % of events twice, batches shuffled; it
 * is unreachable for hookDownFor s and lags 3 s for hookLagFor s; the activity feed lags 5 s. The
 * slips are scheduled sends whose batches are cancelled and sent again on proof when an outcome
 * stays unknown: the simulator's cancel cutoff is 1 s instead of SendGrid's 10 minutes, and the
 * lead 30 s instead of 15 minutes (the quiet time 25 s: longer than a request's 20 s timeout).
 */
const HOOK = {
  batchMs: FAST ? 500 : 1000,
  duplicateFraction: 0.05,
  lagMs: 3000,
  activityLagMs: 5000,
  flood: FAST ? 50 : 200,
};
const SCHEDULING_ENV = { ...FAST_SCHEDULING.env, EMAIL_SETTLE_QUIET_MS: '25000', EMAIL_SEND_LEAD_MS: '30000' };
/** Share of employees whose (well-formed) address is unreachable: accepted, then bounced. */
const UNREACHABLE_RATE = 0.005;
/** R13: HR's resend pressed mid-run must arrive within this. */
const RESEND_TARGET_S = 60;
/** Database faults: the first at `firstAt` s, then one every `minGap`–`maxGap` s; the connection limit held `refuseMs`, the server down `downMs`. */
const DBF = FAST
  ? { firstAt: 4, minGap: 6, maxGap: 15, refuseMs: 5_000, downMs: 1_000 }
  : { firstAt: 5, minGap: 10, maxGap: 40, refuseMs: 20_000, downMs: 2_000 };
/** The schedulers' sweeper in the drill: every 10 s (production: every 5 minutes), stale after 10 s (production: 60 s). */
const SWEEP_CRON = '*/10 * * * * *';
const STALE_HEARTBEAT_MS = 10_000;
const LOST_ACK_FRACTION = 0.05;
const K8S_GRACE_MS = 30_000;

const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
let t0 = 0;
const at = () => (t0 ? `t+${String(Math.round((performance.now() - t0) / 1000)).padStart(3)}s` : '      ');
const event = (what: string) => say(`${at()} ▶ ${what}`);

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Set when the drill stops its processes: an exit is then no longer replaced. */
let drillOver = false;
const exit = exitHandling(say, () => (drillOver = true));

async function main() {
  const started = performance.now();
  say(
    `Beton payroll-night drill — ${N.toLocaleString('en')} employees over ${COMPANIES} companies, 1 % invalid addresses${FAST ? ' (--fast: shortened windows)' : ''}`,
  );
  say(`machine: ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`);

  // ── database, data, simulators ─────────────────────────────────────────────────────
  const db: FreshDatabase = await freshDatabase('drill', { fast: FAST, keep: args['keep-database'] });
  const CRASH = !FAST && db.crash !== undefined;
  exit.add(() => db.drop());
  say(`database: ${db.where}`);
  const seeded = await seedDatabase(db.pool, { employees: N, companies: COMPANIES, invalidRate: 0.01, seed: 20261201 });
  say(`seeded ${seeded.employees} employees, ${seeded.companies} companies, ${seeded.invalidEmails} invalid addresses in ${round(seeded.ms / 1000)} s`);

  // The workers connect as a role of their own: its connection limit is one of the faults.
  const role = await createWorkerRole(db.pool, db.url, 'drill');
  exit.add(() => role.drop());

  const provider: ProviderSimulator = await startProviderSimulator({
    latencyMs: P.latencyMs,
    latencySpreadMs: P.spreadMs,
    ratePerSecond: 40,
    storeAttachmentBytes: false,
    activityApi: true,
    activityDelayMs: HOOK.activityLagMs,
    eventDelays: { processedMs: 300, deliveredMs: 1500 },
    scheduledSends: FAST_SCHEDULING.simulator,
  });
  exit.add(() => provider.close());
  // Some well-formed addresses are unreachable: SendGrid accepts them and the receiver bounces.
  const unreachable = await db.pool.query<{ id: number }>(
    `update employees set email = 'nobody.' || id || '@unreachable.invalid.example' where id in (select id from employees where email like '%@%.example.com' and email not like '%..%' order by id desc limit $1) returning id`,
    [Math.max(1, Math.round(N * UNREACHABLE_RATE))],
  );
  say(`${unreachable.rowCount} employees given an unreachable address (accepted by the provider, then bounced)`);
  // The web app receives the provider's signed Event Webhook.
  const web = await startWebServer(db.url, { env: { SENDGRID_WEBHOOK_PUBLIC_KEY: provider.webhookPublicKey } });
  exit.add(() => web.stop());
  const hookUrl = `${web.url}/api/email/events`;
  provider.configureWebhook({ url: hookUrl, batchMs: HOOK.batchMs, duplicateFraction: HOOK.duplicateFraction, shuffle: true });
  say(
    `web app ${web.url} receives the Event Webhook (batches every ${HOOK.batchMs} ms, ${HOOK.duplicateFraction * 100} % duplicated, shuffled); activity feed lags ${HOOK.activityLagMs / 1000} s; slips scheduled ${Number(SCHEDULING_ENV.EMAIL_SEND_LEAD_MS) / 1000} s after their ${Number(SCHEDULING_ENV.EMAIL_BATCH_WINDOW_MS) / 1000} s window, cancel cutoff ${FAST_SCHEDULING.simulator.cancelCutoffMs / 1000} s`,
  );
  // The run submits every salary to the bank; the bank credits each one a few seconds later.
  const bank = await startBankSimulator({ creditDelayMs: P.bankCreditMs, creditSpreadMs: P.bankSpreadMs });
  exit.add(() => bank.close());
  say(
    `provider simulator ${provider.url} (40/s, ${P.latencyMs} ± ${P.spreadMs} ms) · bank simulator ${bank.url} (credits ${P.bankCreditMs / 1000}–${(P.bankCreditMs + P.bankSpreadMs) / 1000} s after submission, polled every 10 s)`,
  );

  // The render that hangs forever: a valid employee of the largest company, for the month
  // the run will pay (computed for now and a few minutes on, in case a month turns meanwhile).
  const employees = (await db.pool.query<{ id: number; email: string; company_id: string }>('select id, email, company_id from employees order by id')).rows;
  const isValid = (e: { email: string }) => isValidEmailSyntax(e.email);
  const validEmployees = employees.filter(isValid);
  const invalidEmployees = employees.filter((e) => !isValid(e));
  // The first company in the schedule tick's order is fanned out first, so its slips render early.
  const firstCompany = (await db.pool.query<{ id: string }>('select id from companies order by id limit 1')).rows[0]!.id;
  const hungEmployee = validEmployees.find((e) => e.company_id === firstCompany) ?? validEmployees[0]!;
  const months = [...new Set([payrollMonthFor(new Date(), TIME_ZONE), payrollMonthFor(new Date(Date.now() + 10 * 60_000), TIME_ZONE)])];
  const hangKeys = months.map((m) => `slip:${m}:emp-${hungEmployee.id}`);

  // ── processes ───────────────────────────────────────────────────────────────────────
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: role.url,
    SENDGRID_BASE_URL: provider.url,
    SENDGRID_API_KEY: 'SG.beton-dev',
    BANK_API_URL: bank.url,
    LOG_LEVEL: 'warn',
    SHUTDOWN_GRACE_MS: String(K8S_GRACE_MS),
    HEARTBEAT_MS: '1000',
    DB_CONNECTION_BUDGET: String(BUDGET),
    // 6 processes + 1 surge process during the rolling deploy share the 60 connections.
    DB_BUDGET_PROCESSES: '7',
    EMAIL_RATE_LIMIT: String(P.emailRate),
    EMAIL_CONCURRENCY_LIMIT: '45',
    ...SCHEDULING_ENV,
    EMAIL_ACTIVITY_API: 'on',
    EMAIL_PAUSE_PROBE_MS: '2000',
  };
  const schedulerEnv = { ...env, SCHEDULE_TICK_MS: String(P.tickMs), SWEEP_CRON, STALE_HEARTBEAT_MS: String(STALE_HEARTBEAT_MS), BANK_POLL_CRON };
  const echo = (name: string) => (line: string) => {
    if (/"level":(50|60)/.test(line) || (!line.startsWith('{') && line.trim())) process.stderr.write(`  [${name}] ${line.slice(0, 400)}\n`);
  };
  type Slot = 'scheduler-a' | 'scheduler-b' | 'pdf-1' | 'pdf-2' | 'email-1' | 'email-2';
  const queueOf: Record<Slot, string> = {
    'scheduler-a': 'maintenance',
    'scheduler-b': 'maintenance',
    'pdf-1': 'pdf-render',
    'pdf-2': 'pdf-render',
    'email-1': 'send-email',
    'email-2': 'send-email',
  };
  const generation: Record<string, number> = {};
  const current = new Map<Slot, Managed>();
  const workerIds = new Map<string, string>(); // workerId → process name
  let hangFixed = false; // the rolling deploy ships the fix: new pdf-render processes render the slip
  /** Processes the drill itself stopped or killed; any other exit is unexpected (and replaced, as an orchestrator would). */
  const intended = new Set<Managed>();
  const unexpectedExits: Array<{ name: string; code: number | null; signal: string | null }> = [];
  const start = async (slot: Slot): Promise<Managed> => {
    for (;;) {
      const g = (generation[slot] = (generation[slot] ?? 0) + 1);
      const name = `${slot}${g > 1 ? `#${g}` : ''}`;
      const queue = queueOf[slot];
      const extra = queue === 'maintenance' ? schedulerEnv : queue === 'pdf-render' && !hangFixed ? { ...env, ...hangingRenders(hangKeys) } : env;
      const m = spawnWorkerSlowStart({ name, queue, env: extra, onLine: echo(name) });
      try {
        await m.ready;
      } catch (error) {
        if (drillOver) throw error;
        const { code, signal } = await m.exited;
        unexpectedExits.push({ name, code, signal });
        event(`${name} exited before it was ready (code ${code}): starting it again — ${String((error as Error).message).split('\n')[0]}`);
        await sleep(1000);
        continue;
      }
      const id = readyWorkerId(m.lines);
      if (id) workerIds.set(id, name);
      current.set(slot, m);
      void m.exited.then(({ code, signal }) => {
        if (intended.has(m) || drillOver) return;
        unexpectedExits.push({ name, code, signal });
        if (current.get(slot) !== m) return;
        event(`${name} exited unexpectedly (code ${code}, signal ${signal}): replaced`);
        void start(slot);
      });
      return m;
    }
  };
  say('starting workers: pdf-1, pdf-2, email-1, email-2 (separate processes)…');
  await Promise.all((['pdf-1', 'pdf-2', 'email-1', 'email-2'] as Slot[]).map(start));
  const connections = sampleWorkerConnections(db.pool, 500);
  exit.add(async () => connections.stop());

  // ── trigger the monthly run through the schedulers ─────────────────────────────────
  // The monthly schedule ('0 2 1 * *') made due now: a cron for the current minute in Dhaka.
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone: TIME_ZONE, month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' })
      .formatToParts(new Date())
      .map((p) => [p.type, Number(p.value)]),
  );
  const cron = `${parts.minute} ${parts.hour} ${parts.day} ${parts.month} *`;
  await db.pool.query(`update companies set payroll_schedule = $2, time_zone = $1`, [TIME_ZONE, cron]);
  say(`every company's payroll schedule set to '${cron}' (${TIME_ZONE}: due this minute); starting scheduler-a and scheduler-b at once…`);
  const trigger = performance.now();
  await Promise.all((['scheduler-a', 'scheduler-b'] as Slot[]).map(start));
  const month = await waitUntil(
    'the fan-out',
    async () => {
      const { rows } = await db.pool.query<{ month: string; n: number }>(
        `select payload->>'month' as month, count(*)::int as n from jobs where task_name = 'render-slip' group by 1`,
      );
      return rows[0] && rows[0].n > 0 ? rows[0].month : null;
    },
    120_000,
    100,
  );
  t0 = performance.now();
  event(`the schedulers' tick fanned out the ${month} run (first render job ${round((t0 - trigger) / 1000)} s after the schedulers started)`);
  if (!hangKeys.includes(`slip:${month}:emp-${hungEmployee.id}`))
    say(`  warning: the run pays ${month}, not ${months.join('/')}; the hang fault will not fire`);
  const hangKey = `slip:${month}:emp-${hungEmployee.id}`;
  event(`hang fault armed: render of ${hangKey} never returns on the first-generation pdf-render workers`);

  // ── the timeline of faults ─────────────────────────────────────────────────────────
  const at0 = (s: number) => sleep(Math.max(0, t0 + s * 1000 - performance.now()));
  const snaps = { before429: 0, after429: 0, pressureStart: 0, pressureEnd: 0 };
  const deployExits: Array<{ name: string; code: number | null; signal: string | null; ms: number }> = [];
  let sigkill: { name: string; workerId: string; held: number[]; at: number } | undefined;
  const timeline: Array<Promise<void>> = [];
  // The account fault starts with the first email attempt (renders come first), so sends meet it;
  // no send-email worker starts while it lasts (its account check would rightly refuse to start).
  let keyDone!: Promise<void>;
  timeline.push(
    (keyDone = (async () => {
      await at0(T.keyAt);
      await waitUntil(
        'the first email attempt',
        async () => (await db.pool.query(`select 1 from job_attempts where task_name = 'send-slip-email' limit 1`)).rowCount,
        120_000,
        50,
      ).catch(() => null);
      provider.setFaults({ keyRevoked: true });
      event(`account fault: the API key is revoked for ${T.keyFor} s (every send answers 401)`);
      await sleep(T.keyFor * 1000);
      provider.setFaults({ keyRevoked: false });
      event('API key restored');
    })()),
  );
  timeline.push(
    (async () => {
      await at0(T.hookDownAt);
      // The outage must meet events (the checks want a failed post retried): it starts once the
      // webhook is posting and lasts hookDownFor s and until a post has failed (at most 60 s more:
      // the revoked key, or a slow start, can leave the first seconds without any event).
      await waitUntil('the webhook posting', async () => provider.stats().webhook.posted > 0, 120_000, 50).catch(() => null);
      provider.configureWebhook({ unreachableForMs: 3_600_000 });
      event(`the Event Webhook cannot reach the web app for ${T.hookDownFor} s or until a post failed (batches kept and retried)`);
      await sleep(T.hookDownFor * 1000);
      await waitUntil('a webhook post failed', async () => provider.stats().webhook.postFailures > 0, 60_000, 50).catch(() => null);
      provider.configureWebhook({ unreachableForMs: 0 });
      event(`the Event Webhook reaches the web app again (${provider.stats().webhook.postFailures} failed posts)`);
      await at0(T.hookLagAt);
      provider.configureWebhook({ lagMs: HOOK.lagMs });
      event(`events ${HOOK.lagMs / 1000} s late for ${T.hookLagFor} s`);
      await at0(T.hookLagAt + T.hookLagFor);
      provider.configureWebhook({ lagMs: 0 });
    })(),
  );
  const flood = { sent: 0, refused: 0, other: 0 };
  timeline.push(
    (async () => {
      await at0(T.floodAt);
      // Forged batches: signed with a key that is not SendGrid's, or replayed with an old timestamp.
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const forged = JSON.stringify([
        { email: 'x@y.example', timestamp: Math.floor(Date.now() / 1000), event: 'delivered', sg_event_id: 'forged', idempotency_key: `slip:${month}:emp-1` },
      ]);
      for (let i = 0; i < HOOK.flood; i++) {
        const ts = String(Math.floor(Date.now() / 1000) - (i % 2 ? 3600 : 0));
        const res = await fetch(hookUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: signPayload(privateKey, ts, forged), [TIMESTAMP_HEADER]: ts },
          body: forged,
        }).catch(() => null);
        flood.sent++;
        if (res?.status === 401) flood.refused++;
        else flood.other++;
      }
      event(`bad-signature flood: ${flood.sent} forged batches posted, ${flood.refused} refused with 401`);
    })(),
  );
  timeline.push(
    (async () => {
      await at0(T.outageAt);
      provider.unavailableFor(T.outageFor * 1000);
      event(`provider answers 503 for ${T.outageFor} s`);
      await at0(T.outageAt + T.outageFor);
      event('503 window over');
    })(),
  );
  timeline.push(
    (async () => {
      await at0(T.pressureAt);
      snaps.before429 = provider.stats().responses['429'] ?? 0;
      snaps.pressureStart = performance.now();
      provider.setRatePerSecond(T.pressureRate);
      event(`429 pressure: provider limit lowered 40/s → ${T.pressureRate}/s for ${T.pressureFor} s (workers still pace at ${P.emailRate}/s)`);
      await at0(T.pressureAt + T.pressureFor);
      provider.setRatePerSecond(40);
      snaps.pressureEnd = performance.now();
      event('provider limit back to 40/s');
      // 429s still possible until the provider's fixed 1-s window in which the limit changed is over.
      await sleep(1000 - (Date.now() % 1000) + 20);
      snaps.after429 = provider.stats().responses['429'] ?? 0;
    })(),
  );
  timeline.push(
    (async () => {
      await at0(T.lostAcksAt);
      provider.setDropAckFraction(LOST_ACK_FRACTION);
      // A small run, or a loaded machine, sends few emails in the window: lose one for certain.
      provider.dropNextAcks(1);
      event(`${LOST_ACK_FRACTION * 100} % of acks lost (stored, connection dropped) for ${T.lostAcksFor} s`);
      await at0(T.lostAcksAt + T.lostAcksFor);
      provider.setDropAckFraction(0);
      event('acks no longer lost');
    })(),
  );
  let sigkillDone!: Promise<void>;
  timeline.push(
    (sigkillDone = (async () => {
      await at0(T.sigkillAt);
      // A send-email worker holding jobs right now (wait up to 10 s for one to hold any).
      const candidate = await waitUntil(
        'an email worker holding jobs',
        async () => {
          const { rows } = await db.pool.query<{ worker_id: string; ids: string[] }>(
            `select worker_id, array_agg(id) as ids from jobs where status = 'running' and queue = 'send-email' and worker_id is not null group by worker_id order by count(*) desc`,
          );
          const row = rows.find((r) => [...current.entries()].some(([slot, m]) => slot.startsWith('email') && workerIds.get(r.worker_id) === m.name));
          return row ?? null;
        },
        10_000,
        50,
      ).catch(() => null);
      if (!candidate) {
        event('SIGKILL skipped: no email worker held a job for 10 s');
        return;
      }
      const name = workerIds.get(candidate.worker_id)!;
      const slot = [...current.entries()].find(([, m]) => m.name === name)![0];
      const victim = current.get(slot)!;
      intended.add(victim);
      victim.signal('SIGKILL');
      sigkill = { name, workerId: candidate.worker_id, held: candidate.ids.map(Number), at: performance.now() };
      event(`SIGKILL ${name} (pid ${victim.pid}) while it held ${candidate.ids.length} job(s); its replacement starts (the sweeper must recover those jobs)`);
      await victim.exited;
      await keyDone;
      const m = await start(slot);
      event(`${m.name} ready (pid ${m.pid})`);
    })()),
  );
  timeline.push(
    (async () => {
      await at0(T.deployAt);
      event('rolling deploy: every worker replaced one at a time per deployment (new process ready → old one SIGTERM, SIGKILL after 30 s)');
      const roll = async (slot: Slot) => {
        const old = current.get(slot)!;
        intended.add(old);
        const fresh = await start(slot);
        const sentAt = performance.now();
        event(`${fresh.name} ready → SIGTERM ${old.name} (pid ${old.pid})`);
        const result = await old.stop(K8S_GRACE_MS);
        const ms = Math.round(performance.now() - sentAt);
        deployExits.push({ name: old.name, code: result.code, signal: result.signal, ms });
        event(`${old.name} exited with code ${result.code ?? `— (${result.signal})`} after ${round(ms / 1000)} s`);
      };
      const lane = async (slots: Slot[], before?: () => Promise<void>) => {
        await before?.();
        for (const s of slots) await roll(s);
      };
      await Promise.all([
        lane(['scheduler-a', 'scheduler-b']),
        // The killed worker's replacement must be up before its deployment rolls on.
        lane(['email-1', 'email-2'], () => sigkillDone),
        lane(['pdf-1', 'pdf-2'], async () => {
          // The pdf-render rollout ships the fix for the hanging slip. It waits until the hung
          // render's first attempt was killed at its 30-s timeout: a SIGTERM earlier would hand
          // the hung job back instead, and the drill could not show the timeout at work.
          await waitUntil(
            'the hung render to time out',
            async () =>
              (
                await db.pool.query(`select 1 from job_attempts a join jobs j on j.id = a.job_id where j.idempotency_key = $1 and a.error_code = 'timeout'`, [
                  hangKey,
                ])
              ).rowCount,
            60_000,
            250,
          ).catch(() => event('the hung render has not timed out after 60 s'));
          hangFixed = true;
          event('pdf-render rollout starts; the new pdf-render processes carry the fix for the hanging slip');
        }),
      ]);
      event('rolling deploy finished');
    })(),
  );
  /** A late resend's story: each attempt and waiting wake-up of the slip's jobs, seconds after the press. */
  const traceSlipJobs = async (employeeId: number, pressedAt: number) => {
    const lines = await jobStory(db.pool, `j.employee_id = $2 and j.task_name in ('render-slip', 'send-slip-email')`, [employeeId], new Date(pressedAt));
    for (const line of lines) event(`  employee ${employeeId}: ${line}`);
  };
  // HR presses Resend mid-run (R13): (a) for the slip furthest back in the queue — Resend
  // returns it (no second email) and moves it ahead of the bulk; (b) for an invalid address HR
  // has just fixed — its failed email is replaced by resend #1, or, not sent yet, moved ahead.
  const resends: Array<{ label: string; employeeId: number; key: string; outcome: string; pressedAt: number; fixed: boolean; latencyS?: number }> = [];
  const hrJobs = createJobClient(db.pool, jobDefinitions);
  timeline.push(
    (async () => {
      await at0(T.resendAt);
      // HR's clicks may land while a database fault is on (the restart at +40 s did once and
      // stopped the drill): like HR clicking again, each is tried again until the database answers.
      const {
        rows: [back],
      } = await retryOnConnectionError(() =>
        db.pool.query<{ employee_id: number }>(
          `select employee_id from jobs where task_name in ('render-slip', 'send-slip-email') and payload->>'month' = $1 and status = 'queued' and employee_id <> $2
         order by priority desc, id desc limit 1`,
          [month, hungEmployee.id],
        ),
      );
      const fixable = invalidEmployees[0];
      const press = async (label: string, employeeId: number, fixed: boolean) => {
        if (fixed)
          await retryOnConnectionError(() => db.pool.query(`update employees set email = $2 where id = $1`, [employeeId, `fixed-${employeeId}@example.com`]));
        const pressedAt = Date.now();
        const r = await retryOnConnectionError(() => resendSlip({ pool: db.pool, jobs: hrJobs }, { employeeId, month, requestedBy: 'hr:drill' }));
        const key =
          r.outcome === 'created'
            ? `slip:${month}:emp-${employeeId}:resend-${r.resend}`
            : r.outcome === 'delivered'
              ? r.key
              : `slip:${month}:emp-${employeeId}${r.resend ? `:resend-${r.resend}` : ''}`;
        resends.push({ label, employeeId, key, outcome: r.outcome, pressedAt, fixed });
        event(
          `HR presses Resend for ${label} (employee ${employeeId}): ${r.outcome}${r.outcome === 'in-progress' && r.promoted ? ', moved ahead of the bulk' : ''} → ${key}`,
        );
      };
      if (back) await press('the slip furthest back in the queue', back.employee_id, false);
      if (fixable) {
        // HR can resend only a slip of a month their company was paid: on a loaded machine the
        // schedulers may not have started that company's run yet at this moment.
        await waitUntil(
          "the fixed employee's company run",
          async () =>
            (
              await db.pool.query(`select 1 from payroll_runs r join employees e on e.company_id = r.company_id where e.id = $1 and r.month = $2`, [
                fixable.id,
                month,
              ])
            ).rowCount,
          5 * 60_000,
          250,
        );
        await press('an invalid address just fixed', fixable.id, true);
      }
      // Until each arrives at the provider (the simulator's receive time).
      await Promise.all(
        resends.map(async (r) => {
          const m = await waitUntil(`resend ${r.key}`, async () => provider.messages({ customArgs: { idempotency_key: r.key } })[0], 10 * 60_000, 100).catch(
            () => undefined,
          );
          if (m) {
            r.latencyS = round((m.receivedAt.getTime() - r.pressedAt) / 1000);
            event(`resend of ${r.label} arrived ${r.latencyS} s after it was pressed`);
          }
          if (!m || r.latencyS! > RESEND_TARGET_S) await traceSlipJobs(r.employeeId, r.pressedAt);
        }),
      );
    })(),
  );
  // ── database faults (issue 17) ─────────────────────────────────────────────────────
  const dbFaultLog: Array<{ kind: 'terminate' | 'restart' | 'refuse' | 'crash'; at: number; endedAt: number; connections?: number; error?: string }> = [];
  let stopDbFaults = !DB_FAULTS;
  let lastDbFaultEnd = 0;
  const dbFaultsOver = (async () => {
    if (!DB_FAULTS) return;
    await at0(DBF.firstAt);
    for (let i = 0; !stopDbFaults; i++) {
      // A crash only with production settings: --fast turns fsync and synchronous commits off.
      const kind = i === 1 && db.restart ? 'restart' : i === 2 ? 'refuse' : i === 3 && CRASH ? 'crash' : 'terminate';
      // A fault that keeps the database away for a while waits for the end of the 429 pressure
      // window if it would overlap it: with no connection no send goes out, the provider sees
      // no 429 and the pressure is never met (December 4: the 20 s refusal began 2 s before it).
      const awaySec = kind === 'refuse' ? DBF.refuseMs / 1000 : kind === 'restart' || kind === 'crash' ? DBF.downMs / 1000 + 3 : 0;
      const nowSec = (performance.now() - t0) / 1000;
      if (awaySec > 0 && nowSec < T.pressureAt + T.pressureFor + 1 && nowSec + awaySec > T.pressureAt - 1) {
        await at0(T.pressureAt + T.pressureFor + 1);
        if (stopDbFaults) break;
      }
      const startedAt = performance.now();
      const entry: (typeof dbFaultLog)[number] = { kind, at: startedAt, endedAt: startedAt };
      try {
        if (kind === 'terminate') {
          entry.connections = await terminateWorkerConnections(db.pool);
          event(`database fault: pg_terminate_backend on all ${entry.connections} worker connections`);
        } else if (kind === 'restart') {
          event(`database fault: PostgreSQL stopped (fast shutdown), started again after ${DBF.downMs / 1000} s`);
          await db.restart!(DBF.downMs);
          event('database fault over: PostgreSQL accepts connections again');
        } else if (kind === 'crash') {
          event('database fault: PostgreSQL crashed (immediate shutdown: WAL not yet flushed is lost), started again (WAL replayed)');
          await db.crash!();
          event('database fault over: PostgreSQL recovered and accepts connections again');
        } else {
          event(`database fault: the workers' role at its connection limit for ${DBF.refuseMs / 1000} s (every connection refused)`);
          entry.connections = (await refuseWorkerConnections(db.pool, role.name, DBF.refuseMs)).terminated;
          event('database fault over: the workers may connect again');
        }
      } catch (error) {
        entry.error = (error as Error).message;
        event(`database fault ${kind} could not be injected: ${entry.error}`);
      }
      entry.endedAt = lastDbFaultEnd = performance.now();
      dbFaultLog.push(entry);
      const until = performance.now() + (DBF.minGap + Math.random() * (DBF.maxGap - DBF.minGap)) * 1000;
      while (!stopDbFaults && performance.now() < until) await sleep(200);
    }
    event(`database faults stopped after ${dbFaultLog.length}`);
  })();

  let timelineDone = false;
  void Promise.all(timeline).then(() => (timelineDone = true));
  let dbFaultsDone = false;
  void dbFaultsOver.then(() => (dbFaultsDone = true));

  // ── progress until nothing is queued, running or retrying ──────────────────────────
  const validCount = validEmployees.length;
  /**
   * Jobs no worker will take without help, by the sweeper's measure (STALE_HEARTBEAT_MS): waiting
   * past due with no wake-up a worker can take, running untouched by any heartbeat, and wake-ups
   * locked by a worker that stopped touching them.
   */
  const countStranded = async () => {
    const t = String(STALE_HEARTBEAT_MS);
    const { rows } = await db.pool.query<{ n: number }>(
      `select (select count(*) from ${strandedWaitingFrom(t)})::int
            + (select count(*) from jobs j where ${wakeupMissingCondition(t)})::int
            + (select count(*) from ${RUNNING_JOBS_FROM} where ${staleRunningCondition(t)})::int
            + ${lockedWakeupsCountSql(t)}::int as n`,
    );
    return rows[0]!.n;
  };
  let maxStrandedSeen = 0;
  let lastDone = 0;
  let lastAt = performance.now();
  let settledAt = 0;
  const deadline = performance.now() + P.settleTimeoutMs;
  for (;;) {
    await sleep(P.progressMs);
    // The drill's own connection goes down with the server when it restarts: try again.
    const progress = await db.pool
      .query<{ task_name: string; status: string; n: number; monthly: boolean }>(
        `select task_name, status::text, count(*)::int as n, not payload ? 'resend' as monthly from jobs where queue in ('pdf-render', 'send-email') group by 1, 2, 4`,
      )
      .catch((error: Error) => (say(`${at()} (progress not readable: ${error.message})`), null));
    if (!progress) continue;
    const { rows } = progress;
    // The monthly run's jobs (HR's resends are counted as open work, not as the run's slips).
    const n = (task: string, status?: string) =>
      rows.filter((r) => r.monthly && r.task_name === task && (!status || r.status === status)).reduce((a, r) => a + r.n, 0);
    const active = rows.filter((r) => ['queued', 'running', 'retrying'].includes(r.status)).reduce((a, r) => a + r.n, 0);
    const sent = n('send-slip-email', 'done');
    const now = performance.now();
    const rate = ((sent - lastDone) * 1000) / (now - lastAt);
    lastDone = sent;
    lastAt = now;
    const failed = rows.filter((r) => r.status === 'failed').reduce((a, r) => a + r.n, 0);
    say(
      `${at()} ${bar(sent, validCount)} sent ${sent}/${validCount} · rendered ${n('render-slip', 'done')}/${N} · running ${rows.filter((r) => r.status === 'running').reduce((a, r) => a + r.n, 0)} · retrying ${rows.filter((r) => r.status === 'retrying').reduce((a, r) => a + r.n, 0)} · failed ${failed} · ${round(rate)}/s · db conns ${connections.last} (max ${connections.max})`,
    );
    // The database faults go on until nine in ten slips are out and the other faults are over.
    if (timelineDone && sent >= 0.9 * validCount) stopDbFaults = true;
    const strandedNow = await countStranded().catch(() => 0);
    maxStrandedSeen = Math.max(maxStrandedSeen, strandedNow);
    // Settled also means no unknown outcome is open: each is settled by evidence, or its batch is
    // cancelled and sent again (the resends are jobs again, counted above).
    const unknownOpen = async () =>
      (await db.pool.query<{ n: number }>(`select count(*)::int as n from email_unknown_outcomes where settled_at is null`).catch(() => ({ rows: [{ n: 1 }] })))
        .rows[0]!.n;
    if (
      timelineDone &&
      dbFaultsDone &&
      active === 0 &&
      n('render-slip') === N &&
      n('send-slip-email') >= n('render-slip', 'done') &&
      (await unknownOpen()) === 0
    ) {
      settledAt = performance.now();
      break;
    }
    if (now > deadline) {
      say(`${at()} not settled after ${P.settleTimeoutMs / 1000} s — checking what there is`);
      break;
    }
  }
  const wallSeconds = round(((settledAt || performance.now()) - trigger) / 1000);
  event('settled: nothing queued, running or retrying');

  // The bank: the last credits may come in after the slips; the polls mark them and email HR.
  const bankSettled = async () => {
    const { rows } = await db.pool.query<{ credited: number; open: number }>(
      `select (select count(*)::int from salary_transfers where month = $1 and credited_at is not null) as credited,
              (select count(*)::int from jobs where task_name in ('submit-bank-transfers', 'send-bank-status-email') and status in ('queued', 'running', 'retrying')) as open`,
      [month],
    );
    return rows[0]!.credited === N && rows[0]!.open === 0;
  };
  await waitUntil('every salary credited and reported', bankSettled, P.bankCreditMs + P.bankSpreadMs + 120_000, 1000).then(
    () => event('bank: every salary credited, marked and reported to HR'),
    () => event('bank: not every salary credited and reported after the wait — checking what there is'),
  );

  // Delivery truth: wait until the webhook has told every accepted slip's fate (events come
  // late, retried after the webhook's outage, duplicated, out of order).
  const truth = async () =>
    (
      await db.pool.query<{
        delivered: number;
        bounced: number;
        dropped: number;
        spam: number;
        awaiting: number;
        unconfirmed: number;
        resentOnProof: number;
        resentByPerson: number;
      }>(
        `select count(*) filter (where event_state = 'delivered')::int as delivered, count(*) filter (where event_state = 'bounced')::int as bounced,
                count(*) filter (where event_state = 'dropped')::int as dropped, count(*) filter (where event_state = 'spam_report')::int as spam,
                count(*) filter (where status = 'sent' and (event_state is null or event_state in ('processed', 'deferred')) or outcome_unknown_since is not null)::int as awaiting,
                (select count(*)::int from email_unknown_outcomes u where u.settled_at is null and u.idempotency_key like $1) as unconfirmed,
                coalesce(sum(resent_on_proof), 0)::int as "resentOnProof", coalesce(sum(resent_by_person), 0)::int as "resentByPerson"
         from email_deliveries where idempotency_key like $1`,
        [`slip:${month}:%`],
      )
    ).rows[0]!;
  await waitUntil('the webhook to confirm every slip', async () => (await truth()).awaiting === 0, 120_000, 1000).then(
    () => event('webhook: every accepted slip delivered or bounced per its events'),
    () => event('webhook: some slips still await confirmation after 120 s — checking what there is'),
  );
  const t = await truth();

  // ── checks ───────────────────────────────────────────────────────────────────────────
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  const stats = provider.stats();

  // Exactly one slip per valid employee, from the simulator's store: under the monthly key or,
  // for an address HR fixed mid-run, a resend's (`slip:<month>:emp-<id>:resend-<n>`).
  const fixedIds = new Set(resends.filter((r) => r.fixed).map((r) => r.employeeId));
  const slipOwners = [...validEmployees, ...invalidEmployees.filter((e) => fixedIds.has(e.id))];
  const stillInvalid = invalidEmployees.filter((e) => !fixedIds.has(e.id));
  const perKey = new Map<string, number>();
  const perEmployee = new Map<number, number>();
  let withoutPdf = 0;
  for (const m of provider.messages()) {
    const key = m.customArgs?.idempotency_key;
    if (!key?.startsWith(`slip:${month}:`)) continue;
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
    const attempt = /^slip:\d{4}-\d{2}:emp-(\d+)(?::resend-\d+)?$/.exec(key);
    if (attempt) perEmployee.set(Number(attempt[1]), (perEmployee.get(Number(attempt[1])) ?? 0) + 1);
    if (!m.attachments.some((a) => a.type === 'application/pdf')) withoutPdf++;
  }
  const hungJob = (await db.pool.query<{ status: string }>(`select status::text from jobs where idempotency_key = $1`, [hangKey])).rows[0];
  const hungDelivered = perKey.get(hangKey) ?? 0;
  // The hung slip is counted like any other when it was delivered; if it ended failed (its
  // every attempt timed out), it is excluded from "missing" here and reported by name.
  const excluded = hungDelivered === 0 && hungJob?.status === 'failed' ? [hangKey] : [];
  let delivered = 0;
  let duplicates = 0;
  const missingKeys: string[] = [];
  for (const e of slipOwners) {
    const key = `slip:${month}:emp-${e.id}`;
    const c = perEmployee.get(e.id) ?? 0;
    if (c >= 1) delivered++;
    if (c > 1) duplicates += c - 1;
    if (c === 0 && !excluded.includes(key)) missingKeys.push(key);
  }
  const toInvalid = stillInvalid.filter((e) => (perEmployee.get(e.id) ?? 0) > 0).length;
  check(
    'exactly one slip per valid employee',
    duplicates === 0 && missingKeys.length === 0 && toInvalid === 0 && withoutPdf === 0,
    `${delivered}/${slipOwners.length} delivered (${fixedIds.size} address fixed mid-run), duplicates ${duplicates}, missing ${missingKeys.length}${missingKeys.length ? ` (${missingKeys.slice(0, 5).join(', ')}${missingKeys.length > 5 ? ', …' : ''})` : ''}, to invalid addresses ${toInvalid}, without PDF ${withoutPdf}${excluded.length ? `, excluded: ${excluded.join(', ')} (the hung slip, failed)` : ''}`,
  );

  // HR's resends pressed mid-run: each arrived, once, within the target.
  const resendLatencySeconds = resends.length && resends.every((r) => r.latencyS !== undefined) ? Math.max(...resends.map((r) => r.latencyS!)) : null;
  check(
    `a resend pressed mid-run arrives within ${RESEND_TARGET_S} s (HR ahead of the bulk)`,
    resends.length === 2 && resendLatencySeconds !== null && resendLatencySeconds <= RESEND_TARGET_S,
    resends.length
      ? resends
          .map(
            (r) =>
              `${r.label}: ${r.outcome}, ${r.key} arrived ${r.latencyS === undefined ? 'never' : `after ${r.latencyS} s`}, ${perEmployee.get(r.employeeId) ?? 0} email(s)`,
          )
          .join('; ')
      : 'no resend was pressed',
  );

  // Invalid addresses: failed with the provider's reason after exactly one invalid_recipient attempt (the last).
  const inv = await db.pool.query<{
    employee_id: number;
    status: string;
    last_error_code: string | null;
    last_error: string | null;
    codes: (string | null)[];
    outcomes: string[];
  }>(
    `select j.employee_id, j.status::text, j.last_error_code, j.last_error,
            array_agg(a.error_code order by a.attempt, a.id) as codes, array_agg(a.outcome::text order by a.attempt, a.id) as outcomes
     from jobs j join job_attempts a on a.job_id = j.id
     where j.task_name = 'send-slip-email' and j.payload->>'month' = $1 and j.employee_id = any($2::int[]) group by j.id`,
    [month, stillInvalid.map((e) => e.id)],
  );
  const goodInvalid = inv.rows.filter(
    (r) =>
      r.status === 'failed' &&
      r.last_error_code === 'invalid_recipient' &&
      /valid address/i.test(r.last_error ?? '') &&
      r.codes.filter((c) => c === 'invalid_recipient').length === 1 &&
      r.codes.at(-1) === 'invalid_recipient' &&
      r.outcomes.slice(0, -1).every((o) => o !== 'failed' && o !== 'done'),
  );
  const invalidFailed = goodInvalid.length;
  const earlierTransient = inv.rows.reduce((a, r) => a + r.codes.length - 1, 0);
  check(
    'invalid addresses failed with the provider reason, one invalid_recipient attempt',
    invalidFailed === stillInvalid.length,
    `${invalidFailed}/${stillInvalid.length} failed with invalid_recipient ("${inv.rows[0]?.last_error ?? '-'}") as the last and only such attempt; ${earlierTransient} earlier transient attempt(s) (503/429/lost worker) before it`,
  );

  const otherFailed = await db.pool.query<{
    idempotency_key: string;
    last_error_code: string | null;
    last_error: string | null;
    attempts: number;
    history: string;
  }>(
    `select j.idempotency_key, j.last_error_code, left(j.last_error, 300) as last_error, j.attempts,
            (select string_agg(coalesce(a.error_code, a.outcome::text), ' → ' order by a.attempt, a.id) from job_attempts a where a.job_id = j.id) as history
     from jobs j where j.status = 'failed' and j.queue in ('pdf-render', 'send-email') and not (j.task_name = 'send-slip-email' and j.employee_id = any($1::int[]))`,
    [invalidEmployees.map((e) => e.id)],
  );
  check(
    'no other job failed',
    otherFailed.rows.filter((r) => !excluded.some((k) => r.idempotency_key === k)).length === 0,
    otherFailed.rows.length
      ? otherFailed.rows
          .slice(0, 5)
          .map(
            (r) =>
              `${r.idempotency_key} ${r.last_error_code} after ${r.attempts} (${r.history}; last: "${r.last_error ?? ''}"); delivered ${perKey.get(r.idempotency_key.replace(/:email$/, '')) ?? 0}×`,
          )
          .join('; ')
      : 'none',
  );

  const runs = await db.pool.query<{ company_id: string; n: number }>(`select company_id, count(*)::int as n from payroll_runs group by company_id`);
  const payrollRuns = runs.rows.reduce((a, r) => a + r.n, 0);
  const fanoutAttempts = await db.pool.query<{ n: number; statuses: string[] }>(
    `select count(*)::int as n, array_agg(distinct status::text) as statuses from jobs where task_name = 'payroll-fanout'`,
  );
  check(
    'exactly one payroll run per company (two schedulers)',
    runs.rows.length === COMPANIES && runs.rows.every((r) => r.n === 1),
    `${payrollRuns} payroll_runs rows for ${COMPANIES} companies; ${fanoutAttempts.rows[0]!.n} payroll-fanout jobs (${fanoutAttempts.rows[0]!.statuses?.join(', ')})`,
  );

  const left = await db.pool.query<{ status: string; n: number }>(
    `select status::text, count(*)::int as n from jobs where status in ('queued', 'running', 'retrying') and queue in ('pdf-render', 'send-email') group by 1`,
  );
  const stuck = left.rows.reduce((a, r) => a + r.n, 0);
  const runningAny = (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where status = 'running' and queue <> 'maintenance'`)).rows[0]!.n;
  check(
    'nothing left running, queued or retrying',
    stuck === 0 && runningAny === 0,
    stuck ? left.rows.map((r) => `${r.n} ${r.status}`).join(', ') : '0 jobs running',
  );

  // The hung render: killed at its timeout, other work went on meanwhile.
  const hung = await db.pool.query<{
    attempt: number;
    outcome: string;
    error_code: string | null;
    duration_ms: number | null;
    started_at: Date;
    finished_at: Date | null;
    worker_id: string | null;
  }>(
    `select a.attempt, a.outcome::text, a.error_code, a.duration_ms, a.started_at, a.finished_at, a.worker_id
     from job_attempts a join jobs j on j.id = a.job_id where j.idempotency_key = $1 order by a.attempt, a.id`,
    [hangKey],
  );
  const timeoutAttempt = hung.rows.find((a) => a.error_code === 'timeout');
  let otherDuring = { renders: 0, sameWorker: 0, emails: 0 };
  if (timeoutAttempt?.finished_at) {
    const { rows } = await db.pool.query<{ renders: number; same: number; emails: number }>(
      `select count(*) filter (where j.task_name = 'render-slip')::int as renders,
              count(*) filter (where j.task_name = 'render-slip' and a.worker_id = $3)::int as same,
              count(*) filter (where j.task_name = 'send-slip-email')::int as emails
       from job_attempts a join jobs j on j.id = a.job_id
       where a.outcome = 'done' and a.finished_at > $1 and a.finished_at < $2 and j.idempotency_key <> $4`,
      [timeoutAttempt.started_at, timeoutAttempt.finished_at, timeoutAttempt.worker_id, hangKey],
    );
    otherDuring = { renders: rows[0]!.renders, sameWorker: rows[0]!.same, emails: rows[0]!.emails };
  }
  const killedAtTimeout = !!timeoutAttempt && (timeoutAttempt.duration_ms ?? 0) >= 29_000 && (timeoutAttempt.duration_ms ?? 0) <= 40_000;
  const hungRenderKilled = killedAtTimeout && otherDuring.renders + otherDuring.emails > 0;
  check(
    'the hung render was killed at its 30 s timeout and other work went on',
    hungRenderKilled,
    `${hangKey}: attempts ${hung.rows.map((a) => `#${a.attempt} ${a.outcome}${a.error_code ? `/${a.error_code}` : ''} ${a.duration_ms === null ? '?' : round(a.duration_ms / 1000)} s`).join(', ')}; final ${hungJob?.status}, delivered ${hungDelivered}×; ` +
      `while it hung: ${otherDuring.renders} other renders done (${otherDuring.sameWorker} on the same process), ${otherDuring.emails} emails sent`,
  );

  check(
    'worker DB connections within the budget',
    connections.max <= BUDGET && connections.samples > 0,
    `max ${connections.max} ≤ ${BUDGET} over ${connections.samples} samples every 500 ms`,
  );

  const total429 = stats.responses['429'] ?? 0;
  const inside429 = snaps.after429 - snaps.before429;
  const provider429 = total429 - inside429;
  check(
    'no 429 while the provider limit was unchanged',
    provider429 === 0 && snaps.pressureEnd > 0,
    `${provider429} outside the pressure window; ${inside429} during it (expected: limit lowered to ${T.pressureRate}/s for ${T.pressureFor} s, absorbed by retries)`,
  );

  const sigtermExits = deployExits.map((d) => d.code ?? 137);
  check(
    'rolling deploy: every worker exited 0 on SIGTERM within the grace period',
    deployExits.length === 6 && sigtermExits.every((c) => c === 0),
    deployExits.map((d) => `${d.name} ${d.code ?? d.signal} in ${round(d.ms / 1000)} s`).join(', '),
  );

  if (sigkill) {
    // The held list is a snapshot taken just before the kill: a job may still have finished in
    // between. Every attempt of the killed worker must be closed (recovered by the sweeper, or
    // finished before the kill), at least one recovered, and none of the jobs left open.
    const rec = await db.pool.query<{ recovered: number; dangling: number; open: number; done: number }>(
      `select count(*) filter (where a.outcome = 'recovered' and a.worker_id = $2)::int as recovered,
              count(*) filter (where a.outcome = 'running' and a.worker_id = $2)::int as dangling,
              count(distinct j.id) filter (where j.status in ('queued', 'running', 'retrying'))::int as open,
              count(distinct j.id) filter (where j.status = 'done')::int as done
       from jobs j join job_attempts a on a.job_id = j.id where j.id = any($1::bigint[])`,
      [sigkill.held, sigkill.workerId],
    );
    const r = rec.rows[0]!;
    check(
      'the SIGKILLed worker’s jobs were recovered by the sweeper',
      r.recovered > 0 && r.dangling === 0 && r.open === 0,
      `${sigkill.name} held ${sigkill.held.length}; ${r.recovered} recovered (worker_lost) and retried, ${sigkill.held.length - r.recovered} finished just before the kill; ${r.done} done, ${r.open} open`,
    );
  } else check('the SIGKILLed worker’s jobs were recovered by the sweeper', false, 'no SIGKILL happened');

  // The bank: every salary submitted once under its month's reference and credited; HR told once per poll that found some.
  const atBank = bank.transfers().filter((t) => t.reference.startsWith(`salary:${month}:`));
  const marked = await db.pool.query<{ submitted: number; credited: number }>(
    `select count(*) filter (where submitted_at is not null)::int as submitted, count(*) filter (where credited_at is not null)::int as credited from salary_transfers where month = $1`,
    [month],
  );
  const pollsWithCredits = await db.pool.query<{ n: number; credited: number }>(
    `select count(*)::int as n, coalesce(sum(credited), 0)::int as credited from bank_polls where credited > 0`,
  );
  check(
    'salary transfers: each employee’s net pay submitted once and marked credited for the month',
    atBank.length === N &&
      atBank.every((t) => t.status === 'credited') &&
      marked.rows[0]!.submitted === N &&
      marked.rows[0]!.credited === N &&
      pollsWithCredits.rows[0]!.credited === N,
    `${atBank.length}/${N} transfers at the bank (${atBank.filter((t) => t.status === 'credited').length} credited); ${marked.rows[0]!.submitted} submitted, ${marked.rows[0]!.credited} marked credited for ${month}, found by ${pollsWithCredits.rows[0]!.n} poll(s)`,
  );
  const statusJobs = await db.pool.query<{ key: string; company_id: string; credited: number; hr: string; status: string }>(
    `select j.idempotency_key as key, j.company_id, (j.payload->>'credited')::int as credited, u.email as hr, j.status::text
     from jobs j join users u on u.company_id = j.company_id and u.role = 'HR' where j.task_name = 'send-bank-status-email'`,
  );
  const statusMails = new Map<string, string[][]>();
  for (const m of provider.messages()) {
    const key = m.customArgs?.idempotency_key;
    if (key?.startsWith('bank-status:')) statusMails.set(key, [...(statusMails.get(key) ?? []), m.to]);
  }
  const perCompany = new Map<string, number>();
  for (const j of statusJobs.rows) perCompany.set(j.company_id, (perCompany.get(j.company_id) ?? 0) + j.credited);
  const employeesOf = new Map<string, number>();
  for (const e of employees) employeesOf.set(e.company_id, (employeesOf.get(e.company_id) ?? 0) + 1);
  const statusOk =
    statusJobs.rows.length > 0 &&
    statusJobs.rows.every((j) => j.status === 'done' && statusMails.get(j.key)?.length === 1 && statusMails.get(j.key)![0]!.join() === j.hr) &&
    statusMails.size === statusJobs.rows.length &&
    [...employeesOf].every(([company, n]) => perCompany.get(company) === n);
  check(
    'bank poll: one status email per company per poll that found credits, to its HR, two schedulers',
    statusOk,
    `${statusMails.size} status emails for ${statusJobs.rows.length} (company, poll) pairs over ${pollsWithCredits.rows[0]!.n} poll(s); duplicates ${[...statusMails.values()].filter((l) => l.length > 1).length}; companies whose reported counts add up to their employees ${[...employeesOf].filter(([c, n]) => perCompany.get(c) === n).length}/${employeesOf.size}`,
  );

  // Issue 16: the account fault paused the queue and failed nothing; the webhook's truth.
  const pauses = await db.pool.query<{ n: number }>(`select count(*)::int as n from audit_log where action = 'resume-queue'`);
  const accountFaultFailedJobs = (
    await db.pool.query<{ n: number }>(
      `select count(*)::int as n from jobs where status = 'failed' and last_error_code in ('provider_unauthorized', 'sender_not_verified', 'provider_forbidden')`,
    )
  ).rows[0]!.n;
  const accountFaultAttempts = (await db.pool.query<{ n: number }>(`select count(*)::int as n from job_attempts where error_code = 'provider_unauthorized'`))
    .rows[0]!.n;
  check(
    'account fault (key revoked): the send-email queue paused and resumed, no job failed',
    accountFaultFailedJobs === 0 && pauses.rows[0]!.n > 0 && accountFaultAttempts > 0,
    `${accountFaultAttempts} attempts met the 401 and went back to queued; ${pauses.rows[0]!.n} resume(s); ${accountFaultFailedJobs} jobs failed by it`,
  );
  const unreachableIds = new Set(unreachable.rows.map((r) => r.id));
  check(
    'delivered per the webhook: every reachable slip delivered, every unreachable one bounced, nothing awaiting',
    t.delivered === slipOwners.length - unreachableIds.size && t.bounced === unreachableIds.size && t.awaiting === 0,
    `delivered ${t.delivered}/${slipOwners.length - unreachableIds.size} (the reachable valid addresses and those fixed mid-run), bounced ${t.bounced}/${unreachableIds.size}, dropped ${t.dropped}, awaiting confirmation ${t.awaiting}; sent again after an unknown outcome found no evidence in the settle window ${t.resent} (a SIGKILLed worker's sends that had not left: none was a duplicate at the provider, see the first check)`,
  );
  const counts = await webhookCounts(db.pool);
  const hookStats = provider.stats().webhook;
  check(
    'webhook: forged and replayed batches refused and counted, duplicates stored once',
    flood.refused === flood.sent &&
      (counts['bad_signature'] ?? 0) + (counts['stale_timestamp'] ?? 0) >= flood.sent &&
      (hookStats.duplicatesPosted === 0 || (counts['duplicate'] ?? 0) > 0) &&
      hookStats.postFailures > 0,
    `${flood.refused}/${flood.sent} forged refused; counters ${JSON.stringify(counts)}; provider posted ${hookStats.posted} batches (${hookStats.eventsPosted} events, ${hookStats.duplicatesPosted} duplicates), ${hookStats.postFailures} failed posts retried`,
  );
  // Database faults (issue 17).
  const runnerDeaths = (await db.pool.query<{ n: number }>(`select coalesce(sum(runner_deaths), 0)::int as n from workers`)).rows[0]!.n;
  const strandedJobs = await countStranded();
  const dbFaultKinds = { terminate: 0, restart: 0, refuse: 0, crash: 0 };
  for (const f of dbFaultLog) if (!f.error) dbFaultKinds[f.kind]++;
  const dbFaults = dbFaultKinds.terminate + dbFaultKinds.restart + dbFaultKinds.refuse + dbFaultKinds.crash;
  const settledAfterLastFaultSeconds = lastDbFaultEnd && settledAt ? round((settledAt - lastDbFaultEnd) / 1000) : null;
  if (DB_FAULTS) {
    check(
      'database faults happened',
      dbFaults > 0 &&
        dbFaultKinds.refuse === 1 &&
        (dbFaultKinds.restart === 1 || !db.restart) &&
        // The crash is the fourth fault: a run over before it has none.
        (dbFaultKinds.crash === 1 || !CRASH || dbFaultLog.length <= 3) &&
        dbFaultLog.every((f) => !f.error),
      `${dbFaults} in all: ${dbFaultKinds.terminate} × every worker connection terminated (${dbFaultLog.reduce((a, f) => a + (f.kind === 'terminate' ? (f.connections ?? 0) : 0), 0)} connections), ${dbFaultKinds.restart} × PostgreSQL restarted${db.restart ? '' : ' (not possible on a DATABASE_URL server)'}, ${dbFaultKinds.refuse} × connections refused for ${DBF.refuseMs / 1000} s, ${dbFaultKinds.crash} × PostgreSQL crashed${CRASH ? '' : FAST ? ' (not with --fast: fsync off)' : ' (not possible on a DATABASE_URL server)'}; at t+${dbFaultLog.map((f) => Math.round((f.at - t0) / 1000)).join(', +')} s${
        dbFaultLog.some((f) => f.error)
          ? `; failed to inject: ${dbFaultLog
              .filter((f) => f.error)
              .map((f) => f.error)
              .join('; ')}`
          : ''
      }`,
    );
    check(
      'settled within 2 minutes of the last database fault',
      settledAfterLastFaultSeconds !== null && settledAfterLastFaultSeconds <= 120,
      `${settledAfterLastFaultSeconds ?? '—'} s after the last fault ended (sweeper every 10 s, stale after ${STALE_HEARTBEAT_MS / 1000} s)`,
    );
  }
  check(
    'no job runner stopped, no worker exited unexpectedly',
    runnerDeaths === 0 && unexpectedExits.length === 0,
    `runner deaths ${runnerDeaths}; unexpected exits ${unexpectedExits.length ? unexpectedExits.map((e) => `${e.name} code ${e.code ?? e.signal}`).join(', ') : '0'}`,
  );
  check('nothing stranded', strandedJobs === 0, `${strandedJobs} at the end (most seen during the run: ${maxStrandedSeen}, each put back by the sweeper)`);

  check(
    'the faults happened',
    (stats.responses['503'] ?? 0) > 0 && inside429 > 0 && stats.droppedAcks > 0,
    `${stats.responses['503'] ?? 0} × 503, ${inside429} × 429 in the pressure window, ${stats.droppedAcks} lost acks; provider max in flight ${stats.maxInFlight}, max ${stats.maxRequestsPerSecond} requests in one second`,
  );

  // ── report ─────────────────────────────────────────────────────────────────────────
  say('');
  say(`Drill report — ${month} run, ${N} employees (${validCount} valid, ${invalidEmployees.length} invalid), ${COMPANIES} companies`);
  say(
    `  wall time ${wallSeconds} s from the schedulers' start to settled (${round((performance.now() - started) / 1000)} s in all); provider ${JSON.stringify(stats.responses)}`,
  );
  for (const c of checks) say(`  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  const passed = checks.every((c) => c.ok);
  say(passed ? 'All checks passed.' : `${checks.filter((c) => !c.ok).length} check(s) failed.`);

  await exit.finish(passed ? 0 : 1);
  if (args.json) {
    process.stdout.write(
      `${JSON.stringify({
        employees: N,
        valid: slipOwners.length,
        delivered,
        duplicates,
        missing: missingKeys.length,
        invalidFailed,
        payrollRuns,
        stuck,
        provider429,
        maxWorkerConnections: connections.max,
        hungRenderKilled,
        sigtermExits,
        wallSeconds,
        bounced: t.bounced,
        dropped: t.dropped,
        deliveredEvents: t.delivered,
        awaitingEvents: t.awaiting,
        unconfirmed: t.unconfirmed,
        resentOnProof: t.resentOnProof,
        resentByPerson: t.resentByPerson,
        discardedByProvider: stats.scheduled.discarded,
        batchesCancelled: stats.scheduled.cancellations,
        accountFaultFailedJobs,
        resendLatencySeconds,
        dbFaults,
        dbFaultKinds,
        runnerDeaths,
        strandedJobs,
        unexpectedExits: unexpectedExits.length,
        settledAfterLastFaultSeconds,
      })}\n`,
    );
  }
  process.exit(passed ? 0 : 1);
}

main().catch(async (error) => {
  process.stderr.write(`drill: ${error?.stack ?? error}\n`);
  await exit.finish(1);
  process.exit(1);
});

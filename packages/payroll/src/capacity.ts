/**
 * The capacity planner on measured costs (issue 23): `npm run bench` writes what a slip cost on
 * the machine it ran on (CPU ms per slip by process kind, the render job's and the send's wall
 * time, the measured throughput); this plans a payroll night from those figures instead of
 * the story's 0.8 s / 1.2 s — how many render and email processes on how many cores, how many
 * database connections, how long, and what it costs — and predicts what a given deployment
 * (e.g. the bench's own: one machine, one process of each kind) would do.
 *
 * The model. A slip costs C_k CPU ms in each process kind k (render, email, scheduler, web,
 * postgres). At a throughput of r slips/s, kind k needs r × C_k / 1000 cores, at most `maxLoad`
 * of each core planned (headroom for the measured spread). The stages are pipelined, so the
 * throughput is the lowest of:
 *   - the provider's rate R;
 *   - email slots: EMAIL_CONCURRENCY_LIMIT / send time (a send holds its slot that long);
 *   - render slots: render threads / render job time (a job holds its slot for load + render
 *     + store + enqueue, not just the PDF);
 *   - CPU: cores available / total CPU ms per slip (every kind on the same machines), when the
 *     database shares the machines; else each side on its own.
 * The run takes N / throughput + one slip's latency (render job + send).
 */

export interface MeasuredCosts {
  /** When and where it was measured (the bench's report). */
  measuredAt: string;
  machine: { cores: number; loadAverage?: number[]; othersCores?: number; loaded?: boolean };
  employees: number;
  providerRate: number;
  emailConcurrency: number;
  renderThreads: number;
  /** Render jobs in flight per thread (RENDER_JOBS_PER_THREAD); 1 when the costs predate the setting. */
  renderJobsPerThread?: number;
  slipsPerSecond: number;
  wallSeconds: number;
  /** CPU ms per slip, user + system, by process kind (and the total). */
  cpuMsPerSlip: { render: number; email: number; scheduler: number; postgres: number; web: number; total?: number };
  /** Median render job (load + render + store + enqueue), ms of wall time. */
  renderJobMs: number;
  /** Median send job (slot held: database work + the provider's latency), ms. */
  sendMs: number;
  statementsPerSlip?: number | null;
}

export class CostsError extends Error {
  override readonly name = 'CostsError';
}

/** Checks a costs file's content (what the bench wrote), with a clear message for what is missing. */
export function parseCosts(raw: unknown, where = 'costs'): MeasuredCosts {
  const o = raw as Partial<MeasuredCosts> | null;
  const need = (ok: boolean, what: string) => {
    if (!ok) throw new CostsError(`${where}: ${what} (write the file with \`npm run bench -- --json\`)`);
  };
  need(typeof o === 'object' && o !== null, 'not a JSON object');
  const c = o!.cpuMsPerSlip;
  need(typeof c === 'object' && c !== null, 'no cpuMsPerSlip');
  for (const k of ['render', 'email', 'scheduler', 'postgres', 'web'] as const)
    need(Number.isFinite(c![k]) && c![k] >= 0, `cpuMsPerSlip.${k} must be a number >= 0`);
  for (const k of ['renderJobMs', 'sendMs', 'slipsPerSecond', 'wallSeconds', 'employees', 'providerRate', 'emailConcurrency', 'renderThreads'] as const) {
    need(Number.isFinite(o![k]) && (o![k] as number) > 0, `${k} must be a number > 0`);
  }
  need(typeof o!.measuredAt === 'string', 'no measuredAt date');
  need(typeof o!.machine?.cores === 'number', 'no machine.cores');
  return o as MeasuredCosts;
}

export interface NightInput {
  employees: number;
  /** Emails per second the provider accepts (the account's plan). */
  providerRate: number;
  /** Seconds from the start to the deadline. */
  windowSeconds: number;
  /** Cores per worker machine. Default 8. */
  coresPerMachine?: number;
  /** Price of one machine of `coresPerMachine` cores for an hour. Default 40 (BDT, 8 cores). */
  machineHourCost?: number;
  /** Share of each core to plan on (headroom for spread). Default 0.75. */
  maxLoad?: number;
  /** In-flight sends one email process holds at most. Default 1000. */
  slotsPerEmailProcess?: number;
  /** Database connections each worker process keeps (DB_POOL_MAX). Default 10. */
  poolPerProcess?: number;
  /**
   * The throughput to plan for: a number of slips/s, 'fastest' (the provider's rate), or by
   * default 'deadline': what the deadline needs with `margin` to spare (never above the rate).
   */
  slipsPerSecond?: number | 'fastest' | 'deadline';
  /** With 'deadline': plan for the needed throughput × this. Default 1.25. */
  margin?: number;
}

export interface NightPlan {
  costs: { measuredAt: string; cores: number; loaded: boolean; cpuMsPerSlip: number; renderJobMs: number; sendMs: number };
  input: Required<Omit<NightInput, 'slipsPerSecond'>> & { slipsPerSecond: number | 'fastest' | 'deadline' };
  /** The fastest the provider allows: N / R + one slip's latency. */
  fastestRunSeconds: number;
  /** The throughput planned for and why. */
  slipsPerSecond: number;
  /** The throughput the deadline needs (N / (window − one slip's latency)). */
  neededSlipsPerSecond: number;
  runSeconds: number;
  slackSeconds: number;
  onTime: boolean;
  render: { cores: number; processes: number; threadsPerProcess: number };
  email: { cores: number; processes: number; concurrencyLimit: number };
  scheduler: { cores: number; processes: number };
  web: { cores: number };
  database: { cores: number; connections: number; statementsPerSecond: number | null; beyondOneServer: boolean };
  /** Worker machines (render, email, scheduler, web), and the database server's size in machines of `coresPerMachine` (one server). */
  workerMachines: number;
  databaseMachines: number;
  machineHours: number;
  cost: number;
  /** Of which the database machines' share (they run all day anyway; shown apart). */
  databaseCost: number;
}

const ceil = (x: number) => Math.max(1, Math.ceil(x - 1e-9));

/** Plans a payroll night of `employees` slips from measured per-slip costs. */
export function planNight(costs: MeasuredCosts, raw: NightInput): NightPlan {
  const input = {
    coresPerMachine: 8,
    machineHourCost: 40,
    maxLoad: 0.75,
    slotsPerEmailProcess: 1000,
    poolPerProcess: 10,
    margin: 1.25,
    slipsPerSecond: 'deadline' as const,
    ...raw,
  };
  for (const [k, v] of Object.entries(input)) {
    if (typeof v === 'string' && k === 'slipsPerSecond' && (v === 'fastest' || v === 'deadline')) continue;
    if (!(typeof v === 'number' && Number.isFinite(v) && v >= 0)) throw new CostsError(`${k} must be a number >= 0, got ${v}`);
  }
  if (!(input.employees > 0 && input.providerRate > 0 && input.windowSeconds > 0 && input.coresPerMachine >= 1)) {
    throw new CostsError('employees, provider rate, window and cores per machine must be > 0');
  }
  if (!(input.maxLoad > 0 && input.maxLoad <= 1)) throw new CostsError(`maxLoad must be in (0, 1], got ${input.maxLoad}`);
  const c = costs.cpuMsPerSlip;
  const latencyS = (costs.renderJobMs + costs.sendMs) / 1000;
  const needed = input.employees / Math.max(1, input.windowSeconds - latencyS);
  // The provider's rate (fastest), the deadline's need with a margin, or the rate asked for — never above the provider's.
  // 'deadline': as many worker machines as the deadline's need × margin takes, used fully (the
  // same machine-hours finish sooner; a machine half used costs as much as a full one).
  const workerCoresPerRate = (c.render + c.email + c.scheduler + c.web) / 1000 / input.maxLoad;
  const machinesForDeadline = ceil((workerCoresPerRate * needed * input.margin) / input.coresPerMachine);
  const wanted =
    input.slipsPerSecond === 'fastest'
      ? input.providerRate
      : input.slipsPerSecond === 'deadline'
        ? (machinesForDeadline * input.coresPerMachine) / workerCoresPerRate
        : input.slipsPerSecond;
  if (!(wanted > 0)) throw new CostsError(`the throughput to plan for must be > 0, got ${wanted}`);
  const rate = Math.min(input.providerRate, wanted);
  const cores = (cpuMs: number) => (rate * cpuMs) / 1000 / input.maxLoad;
  const renderCores = cores(c.render);
  const renderProcesses = ceil(renderCores / input.coresPerMachine);
  const emailCores = cores(c.email);
  const inFlight = Math.ceil(rate * (costs.sendMs / 1000) * 1.2);
  // A Node process runs its JavaScript on one core: an email process gets at most one core's work.
  const emailProcesses = Math.max(ceil(emailCores), ceil(inFlight / input.slotsPerEmailProcess));
  const schedulerCores = cores(c.scheduler);
  const schedulerProcesses = ceil(schedulerCores) + 1; // one more stands by
  const webCores = cores(c.web);
  const dbCores = cores(c.postgres);
  const workerCores = renderCores + emailCores + schedulerCores + webCores;
  const workerMachines = ceil(workerCores / input.coresPerMachine);
  const databaseMachines = ceil(dbCores / input.coresPerMachine);
  const processes = renderProcesses + emailProcesses + schedulerProcesses;
  const runSeconds = input.employees / rate + latencyS;
  const machineHours = ((workerMachines + databaseMachines) * runSeconds) / 3600;
  return {
    costs: {
      measuredAt: costs.measuredAt,
      cores: costs.machine.cores,
      loaded: costs.machine.loaded ?? false,
      cpuMsPerSlip: c.total ?? c.render + c.email + c.scheduler + c.web + c.postgres,
      renderJobMs: costs.renderJobMs,
      sendMs: costs.sendMs,
    },
    input,
    fastestRunSeconds: input.employees / input.providerRate + latencyS,
    slipsPerSecond: rate,
    neededSlipsPerSecond: needed,
    runSeconds,
    slackSeconds: input.windowSeconds - runSeconds,
    onTime: runSeconds <= input.windowSeconds,
    render: { cores: renderCores, processes: renderProcesses, threadsPerProcess: Math.min(input.coresPerMachine, Math.ceil(renderCores)) },
    email: { cores: emailCores, processes: emailProcesses, concurrencyLimit: inFlight },
    scheduler: { cores: schedulerCores, processes: schedulerProcesses },
    web: { cores: webCores },
    database: {
      cores: dbCores,
      connections: processes * input.poolPerProcess,
      statementsPerSecond: costs.statementsPerSlip ? rate * costs.statementsPerSlip : null,
      beyondOneServer: dbCores > 32,
    },
    workerMachines,
    databaseMachines,
    machineHours,
    cost: machineHours * input.machineHourCost,
    databaseCost: ((databaseMachines * runSeconds) / 3600) * input.machineHourCost,
  };
}

export interface Deployment {
  employees: number;
  providerRate: number;
  /** Cores of the one machine everything shares (the bench: the database too). */
  cores: number;
  /** Cores busy with other work (the bench measures it). Default 0. */
  othersCores?: number;
  renderThreads: number;
  /** Render jobs in flight per render thread (RENDER_JOBS_PER_THREAD). Default 1. */
  renderJobsPerThread?: number;
  emailConcurrency: number;
}

export interface Prediction {
  slipsPerSecond: number;
  wallSeconds: number;
  binding: 'provider rate' | 'email slots' | 'render slots' | 'CPU';
  limits: Record<'provider rate' | 'email slots' | 'render slots' | 'CPU', number>;
}

/**
 * What one machine running everything (workers, web and database, as in the bench) does with
 * these costs: the lowest of the four limits in the module comment, and the wall time of a run.
 */
export function predictRun(costs: MeasuredCosts, d: Deployment): Prediction {
  const c = costs.cpuMsPerSlip;
  const total = c.total ?? c.render + c.email + c.scheduler + c.web + c.postgres;
  const limits = {
    'provider rate': d.providerRate,
    'email slots': d.emailConcurrency / (costs.sendMs / 1000),
    'render slots': (d.renderThreads * (d.renderJobsPerThread ?? 1)) / (costs.renderJobMs / 1000),
    CPU: ((d.cores - (d.othersCores ?? 0)) * 1000) / total,
  };
  const [binding, rate] = (Object.entries(limits) as Array<[Prediction['binding'], number]>).sort((a, b) => a[1] - b[1])[0]!;
  return { slipsPerSecond: rate, wallSeconds: d.employees / rate + (costs.renderJobMs + costs.sendMs) / 1000, binding, limits };
}

const n1 = (x: number, d = 1) => x.toLocaleString('en-US', { maximumFractionDigits: d });

/** `beton plan`'s printout. */
export function formatNight(p: NightPlan, hhmm: (s: number) => string): string[] {
  const i = p.input;
  return [
    `Payroll night on measured costs (${p.costs.measuredAt.slice(0, 16).replace('T', ' ')} UTC on ${p.costs.cores} cores${p.costs.loaded ? ', machine shared' : ''}: ${n1(p.costs.cpuMsPerSlip, 2)} CPU ms a slip, render job ${n1(p.costs.renderJobMs)} ms, send ${n1(p.costs.sendMs)} ms)`,
    `${n1(i.employees, 0)} slips, provider ${n1(i.providerRate)}/s, window ${hhmm(i.windowSeconds)}; the deadline needs ${n1(p.neededSlipsPerSecond, 2)} slips/s; planned at ${n1(p.slipsPerSecond, 2)} slips/s (${i.slipsPerSecond === 'fastest' ? "the provider's rate: the fastest" : i.slipsPerSecond === 'deadline' ? (p.slipsPerSecond < p.neededSlipsPerSecond * i.margin ? "the provider's rate: the deadline needs more" : `the deadline's need × ${i.margin} on whole machines, used fully`) : 'asked for'}), each core at most ${Math.round(i.maxLoad * 100)} % busy; the fastest possible run: ${hhmm(p.fastestRunSeconds)}`,
    '',
    `  render      ${n1(p.render.cores, 2).padStart(7)} cores → ${p.render.processes} pdf-render process(es) (a render thread per core)`,
    `  email       ${n1(p.email.cores, 2).padStart(7)} cores → ${p.email.processes} send-email process(es), EMAIL_CONCURRENCY_LIMIT ${p.email.concurrencyLimit} (rate × send time × 1.2), EMAIL_RATE_LIMIT ${Math.min(i.providerRate, Math.ceil(p.slipsPerSecond))}`,
    `  scheduler   ${n1(p.scheduler.cores, 2).padStart(7)} cores → ${p.scheduler.processes} maintenance processes (one of them stands by)`,
    `  web         ${n1(p.web.cores, 2).padStart(7)} cores (the Event Webhook's batches, HR's pages)`,
    `  PostgreSQL  ${n1(p.database.cores, 2).padStart(7)} cores, ${p.database.connections} connections (${i.poolPerProcess} per worker process)${p.database.statementsPerSecond ? `, ${n1(p.database.statementsPerSecond, 0)} statements/s` : ''}${p.database.beyondOneServer ? ' — more than one database server does well: plan a lower --rate' : ''}`,
    '',
    `Machines: ${p.workerMachines} × ${i.coresPerMachine}-core for the workers + one database server of ${p.databaseMachines * i.coresPerMachine} cores (priced as ${p.databaseMachines} × ${i.coresPerMachine}-core)`,
    `Run: ${hhmm(p.runSeconds)} → ${p.onTime ? `on time, ${hhmm(p.slackSeconds)} slack` : `LATE by ${hhmm(-p.slackSeconds)}`}; ${n1(p.machineHours, 2)} machine-hours ≈ ${n1(p.cost, 1)} BDT (the database's share ${n1(p.databaseCost, 1)}) at ${n1(i.machineHourCost)} BDT per ${i.coresPerMachine}-core machine-hour`,
  ];
}

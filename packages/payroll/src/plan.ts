/**
 * The capacity planner (SPEC §1, R3, R4): the story's arithmetic as pure functions, so
 * `beton plan`, the tests and the dashboard's ETA compute the same numbers.
 *
 * How the stages combine: render and email are a pipeline (a finished render enqueues its
 * email at once), so both stages run side by side and the run ends when the slowest stage
 * ends, plus the latency of one item through the other stages:
 *   run ≈ max(render time, email time) + (render ms + send ms).
 * Run back to back (all renders, then all emails) it would take their sum; both are shown.
 */
import { EMAIL_PROVIDER_LIMITS } from './jobs/email-policy.ts';

export interface PlanInput {
  /** Slips to render and send. */
  employees: number;
  /** CPU time to render one slip, ms (story: 800). */
  renderMs: number;
  /** Wall time of one email send, ms (story: 1,200). */
  sendMs: number;
  /** CPU part of one send, ms; the rest is waiting on the network (story: 20). Default: 20. */
  sendCpuMs?: number;
  /** Emails per second the provider accepts before answering 429 (story: 40). */
  providerRate: number;
  /** Global cap on sends in flight across all workers (story: 45). Default: 45. */
  concurrencyLimit?: number;
  /** Cores per machine (story: 8). */
  cores: number;
  /** Worker machines (story: 3). */
  machines: number;
  /** Local time the run starts, HH:MM (story: 02:00). */
  start: string;
  /** Local time every slip must be delivered by, HH:MM (story: 09:00); before `start` means the next day. */
  deadline: string;
  /** Machine price per hour, BDT (story: ≈ 40 for an 8-core cloud machine). Default: 40. */
  machineHourCost?: number;
}

export type StageName = 'render' | 'email';

export interface EmailLimit {
  name: 'provider rate' | 'concurrency limit' | 'IO workers';
  perSecond: number;
  /** How the figure is computed, for the printout. */
  formula: string;
}

export interface CapacityPlan {
  input: Required<PlanInput>;
  render: {
    /** CPU-bound: workers = cores. */
    workersPerMachine: number;
    workers: number;
    perSecond: number;
    seconds: number;
  };
  email: {
    /** IO-bound: cores × (1 + wait / CPU). */
    workersPerMachine: number;
    workers: number;
    waitMs: number;
    /** Every ceiling on the send rate, the binding one first. */
    limits: EmailLimit[];
    binding: EmailLimit;
    perSecond: number;
    seconds: number;
    /** The most sends in flight that stay under the provider rate: rate × send time. */
    maxInFlightUnderProviderRate: number;
  };
  /** The stage whose time bounds the run. */
  slowestStage: StageName;
  /** One slip through every stage: render ms + send ms, seconds. */
  itemLatencySeconds: number;
  /** Pipelined: max(stage times) + one item's latency. */
  runSeconds: number;
  /** Stages back to back (for comparison): render time + email time. */
  sequentialSeconds: number;
  /** Seconds from `start` to the finish, and the local clock time. */
  finish: { afterStartSeconds: number; clock: string };
  windowSeconds: number;
  /** deadline − finish; negative means late. */
  slackSeconds: number;
  onTime: boolean;
  machineHours: number;
  cost: number;
  /** The old single loop: render then send, one slip at a time. */
  naive: {
    secondsPerSlip: number;
    seconds: number;
    hours: number;
    slipsInWindow: number;
    missed: number;
  };
}

export class PlanInputError extends Error {
  override readonly name = 'PlanInputError';
}

const CLOCK = /^([01]?\d|2[0-3]):([0-5]\d)$/;

/** 'HH:MM' → seconds after midnight. */
export function parseClock(value: string, label = 'time'): number {
  const m = CLOCK.exec(value.trim());
  if (!m) throw new PlanInputError(`${label} must be HH:MM (e.g. 09:00), got "${value}"`);
  return Number(m[1]) * 3600 + Number(m[2]) * 60;
}

/** Seconds after midnight → 'HH:MM' (rounded to the minute, wrapping past 24 h; '+1d' when past midnight). */
export function formatClock(secondsAfterMidnight: number): string {
  const minutes = Math.round(secondsAfterMidnight / 60);
  const day = Math.floor(minutes / 1440);
  const m = ((minutes % 1440) + 1440) % 1440;
  const hhmm = `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return day > 0 ? `${hhmm} (+${day}d)` : hhmm;
}

/** Seconds between `start` and `deadline` (HH:MM), wrapping past midnight. */
export function windowSeconds(start: string, deadline: string): number {
  const s = parseClock(start, 'start');
  const d = parseClock(deadline, 'deadline');
  return d > s ? d - s : d + 86_400 - s;
}

function positive(value: number, label: string, { integer = false, allowZero = false } = {}): number {
  const ok = Number.isFinite(value) && (allowZero ? value >= 0 : value > 0) && (!integer || Number.isInteger(value));
  if (!ok) throw new PlanInputError(`${label} must be a ${integer ? 'whole number' : 'number'} ${allowZero ? '>= 0' : '> 0'}, got ${value}`);
  return value;
}

/** Render workers = cores (CPU-bound, R3). */
export function cpuWorkers(cores: number): number {
  return cores;
}

/** IO-bound workers ≈ cores × (1 + wait / CPU) (R3: 8 × (1 + 1180 / 20) = 480). */
export function ioWorkers(cores: number, cpuMs: number, waitMs: number): number {
  return Math.round(cores * (1 + waitMs / cpuMs));
}

/** The story's arithmetic for one payroll night. */
export function planCapacity(raw: PlanInput): CapacityPlan {
  const input: Required<PlanInput> = { sendCpuMs: 20, concurrencyLimit: EMAIL_PROVIDER_LIMITS.concurrency.max, machineHourCost: 40, ...raw };
  positive(input.employees, 'employees', { integer: true, allowZero: true });
  positive(input.renderMs, 'render-ms');
  positive(input.sendMs, 'send-ms');
  positive(input.sendCpuMs, 'send-cpu-ms');
  positive(input.providerRate, 'provider-rate');
  positive(input.concurrencyLimit, 'concurrency-limit', { integer: true });
  positive(input.cores, 'cores', { integer: true });
  positive(input.machines, 'machines', { integer: true });
  positive(input.machineHourCost, 'machine-hour-cost', { allowZero: true });
  if (input.sendCpuMs > input.sendMs) throw new PlanInputError(`send-cpu-ms (${input.sendCpuMs}) cannot exceed send-ms (${input.sendMs})`);
  const window = windowSeconds(input.start, input.deadline);

  const renderWorkersPerMachine = cpuWorkers(input.cores);
  const renderWorkers = renderWorkersPerMachine * input.machines;
  const renderPerSecond = renderWorkers / (input.renderMs / 1000);
  const renderSeconds = input.employees / renderPerSecond;

  const sendSeconds = input.sendMs / 1000;
  const waitMs = input.sendMs - input.sendCpuMs;
  const emailWorkersPerMachine = ioWorkers(input.cores, input.sendCpuMs, waitMs);
  const emailWorkers = emailWorkersPerMachine * input.machines;
  const limits: EmailLimit[] = [
    { name: 'provider rate', perSecond: input.providerRate, formula: `${input.providerRate}/s per account` },
    {
      name: 'concurrency limit',
      perSecond: input.concurrencyLimit / sendSeconds,
      formula: `${input.concurrencyLimit} in flight × 1/${sendSeconds} s`,
    },
    { name: 'IO workers', perSecond: emailWorkers / sendSeconds, formula: `${emailWorkers.toLocaleString('en-US')} workers × 1/${sendSeconds} s` },
  ].sort((a, b) => a.perSecond - b.perSecond) as EmailLimit[];
  const binding = limits[0]!;
  const emailSeconds = input.employees / binding.perSecond;

  const slowestStage: StageName = renderSeconds >= emailSeconds ? 'render' : 'email';
  const itemLatencySeconds = (input.renderMs + input.sendMs) / 1000;
  const runSeconds = input.employees === 0 ? 0 : Math.max(renderSeconds, emailSeconds) + itemLatencySeconds;
  const startSeconds = parseClock(input.start, 'start');
  const slackSeconds = window - runSeconds;
  const machineHours = (input.machines * runSeconds) / 3600;

  const secondsPerSlip = itemLatencySeconds;
  const naiveSeconds = input.employees * secondsPerSlip;
  const slipsInWindow = Math.min(input.employees, Math.floor(window / secondsPerSlip));

  return {
    input,
    render: { workersPerMachine: renderWorkersPerMachine, workers: renderWorkers, perSecond: renderPerSecond, seconds: renderSeconds },
    email: {
      workersPerMachine: emailWorkersPerMachine,
      workers: emailWorkers,
      waitMs,
      limits,
      binding,
      perSecond: binding.perSecond,
      seconds: emailSeconds,
      maxInFlightUnderProviderRate: Math.floor(input.providerRate * sendSeconds),
    },
    slowestStage,
    itemLatencySeconds,
    runSeconds,
    sequentialSeconds: renderSeconds + emailSeconds,
    finish: { afterStartSeconds: runSeconds, clock: formatClock(startSeconds + runSeconds) },
    windowSeconds: window,
    slackSeconds,
    onTime: slackSeconds >= 0,
    machineHours,
    cost: machineHours * input.machineHourCost,
    naive: {
      secondsPerSlip,
      seconds: naiveSeconds,
      hours: naiveSeconds / 3600,
      slipsInWindow,
      missed: input.employees - slipsInWindow,
    },
  };
}

export type RunEstimate =
  | { status: 'done'; secondsLeft: 0; finishAt: Date; slackSeconds: number }
  | { status: 'idle'; secondsLeft: null; finishAt: null; slackSeconds: null }
  | { status: 'on-time' | 'late'; secondsLeft: number; finishAt: Date; slackSeconds: number };

/**
 * A live ETA from the work left and the measured rate (the dashboard's estimate and the
 * planner share it): finish = now + remaining / rate; slack = deadline − finish.
 * No rate with work left → 'idle' (no estimate).
 */
export function estimateRun(p: { remaining: number; ratePerSecond: number; now: Date; deadline: Date }): RunEstimate {
  if (p.remaining <= 0) return { status: 'done', secondsLeft: 0, finishAt: p.now, slackSeconds: (p.deadline.getTime() - p.now.getTime()) / 1000 };
  if (!(p.ratePerSecond > 0)) return { status: 'idle', secondsLeft: null, finishAt: null, slackSeconds: null };
  const secondsLeft = p.remaining / p.ratePerSecond;
  const finishAt = new Date(p.now.getTime() + secondsLeft * 1000);
  const slackSeconds = (p.deadline.getTime() - finishAt.getTime()) / 1000;
  return { status: slackSeconds >= 0 ? 'on-time' : 'late', secondsLeft, finishAt, slackSeconds };
}

/** 1666.7 s → '27.8 min'; 100,000 s → '27.8 h'. */
export function formatDuration(seconds: number): string {
  const abs = Math.abs(seconds);
  const sign = seconds < 0 ? '-' : '';
  if (abs < 120) return `${sign}${abs.toFixed(1)} s`;
  if (abs < 7200) return `${sign}${(abs / 60).toFixed(1)} min`;
  return `${sign}${(abs / 3600).toFixed(1)} h`;
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const num = (n: number, digits = 1) => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: digits }));

/** The plan as the readable lines `beton plan` prints. */
export function formatPlan(plan: CapacityPlan): string[] {
  const { input, render, email, naive } = plan;
  const hhmm = (s: number) => {
    const minutes = Math.round(s / 60);
    return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
  };
  const lines = [
    `Payroll night: ${int(input.employees)} slips, ${input.machines} machine(s) × ${input.cores} cores, start ${input.start}, deadline ${input.deadline} (window ${int(plan.windowSeconds)} s)`,
    '',
    `pdf-render (CPU-bound, ${num(input.renderMs)} ms a slip): workers = cores`,
    `  ${render.workersPerMachine} per machine × ${input.machines} = ${render.workers} workers → ${num(render.perSecond)} slips/s → ${int(input.employees)} in ${formatDuration(render.seconds)}`,
    `send-email (IO-bound, ${num(input.sendCpuMs)} ms CPU + ${num(email.waitMs)} ms waiting): workers ≈ cores × (1 + wait/CPU)`,
    `  ${input.cores} × (1 + ${num(email.waitMs)}/${num(input.sendCpuMs)}) = ${int(email.workersPerMachine)} per machine (${int(email.workers)} in all) — but the shared limits decide:`,
    ...email.limits.map(
      (l, i) => `    ${i === 0 ? '→' : ' '} ${l.name.padEnd(17)} ${l.formula.padEnd(28)} = ${num(l.perSecond)}/s${i === 0 ? '  (binding)' : ''}`,
    ),
    `  binding limit: ${email.binding.name}, ${num(email.perSecond)} emails/s → ${int(input.employees)} in ${formatDuration(email.seconds)}` +
      ` (at most ${email.maxInFlightUnderProviderRate} in flight stay under ${num(input.providerRate)}/s)`,
    '',
    `Stages are pipelined (a finished render enqueues its email), so the run ends when the slowest stage ends:`,
    `  max(render ${formatDuration(render.seconds)}, email ${formatDuration(email.seconds)}) + one slip's latency ${num(plan.itemLatencySeconds)} s = ${formatDuration(plan.runSeconds)} (slowest stage: ${plan.slowestStage})`,
    `  (back to back, all renders then all emails, it would take ${formatDuration(plan.sequentialSeconds)})`,
    `Expected finish: ${plan.finish.clock} — ${plan.onTime ? `${hhmm(plan.slackSeconds)} slack before ${input.deadline}` : `LATE by ${hhmm(-plan.slackSeconds)} after ${input.deadline}`}`,
    `Machine time: ${input.machines} × ${formatDuration(plan.runSeconds)} = ${num(plan.machineHours, 2)} machine-hours ≈ ${int(plan.cost)} BDT at ${num(input.machineHourCost)} BDT/machine-hour`,
    '',
    `The naive single loop (render then send, one slip at a time): ${int(input.employees)} × ${num(naive.secondsPerSlip)} s = ${int(naive.seconds)} s ≈ ${num(naive.hours)} h`,
    `  vs the ${int(plan.windowSeconds)} s window → ${int(naive.slipsInWindow)} slips delivered, ${int(naive.missed)} people get nothing`,
  ];
  return lines;
}

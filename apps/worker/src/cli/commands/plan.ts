import { EMAIL_PROVIDER_LIMITS } from '@beton/payroll/jobs';
import { CostsError, formatNight, parseCosts, planNight } from '@beton/payroll/capacity';
import { formatPlan, planCapacity, PlanInputError, windowSeconds, type PlanInput } from '@beton/payroll/plan';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CliError, numberFlag, parse, UsageError, type Command } from '../args.ts';

/** Where `npm run bench` writes its measured costs, and the committed measurement used when that is absent. */
export const BENCH_COSTS_FILE = '.beton/bench-costs.json';
export const COMMITTED_COSTS_FILE = 'docs/capacity.json';

const help = `Usage: beton plan [--employees 50000] [--provider-rate 40] [--start 02:00] [--deadline 09:00]
                  [--costs FILE] [--cores 8] [--machine-hour-cost 40] [--rate N|fastest|deadline] [--max-load 0.75] [--json]
       beton plan --story [--render-ms 800] [--send-ms 1200] [--send-cpu-ms 20] [--concurrency-limit 45]
                  [--machines 3] [--cores 8] … (the story's arithmetic)

The capacity planner on measured costs: what one slip cost in each process kind (CPU ms of
render, email, scheduler, web and PostgreSQL), the render job's and the send's time — from
--costs, by default ${BENCH_COSTS_FILE} (written by \`npm run bench\`) or else the committed
${COMMITTED_COSTS_FILE} — planned for N slips at what the deadline needs (or --rate): how many
render and email processes on how many cores, EMAIL_CONCURRENCY_LIMIT, PostgreSQL's cores and
connections, the run's time against the deadline and the cost (--machine-hour-cost BDT per
--cores-core machine-hour, default 40 for 8 cores). No database needed.

Options:
  --employees <n>          slips (default: 50000)
  --provider-rate <n>      emails/s the provider accepts (default: 40)
  --start <HH:MM>          start of the run (default: 02:00)
  --deadline <HH:MM>       every slip delivered by (default: 09:00)
  --costs <file>           measured costs (default: ${BENCH_COSTS_FILE}, else ${COMMITTED_COSTS_FILE})
  --cores <n>              cores per machine (default: 8)
  --machine-hour-cost <n>  BDT per machine-hour (default: 40)
  --rate <n|fastest|deadline>  slips/s to plan for: a number, the provider's rate (fastest), or
                           what the deadline needs × 1.25 (deadline, the default)
  --max-load <f>           share of each core to plan on (default: 0.75)
  --json                   the plan as one JSON object
  -h, --help               this help

--story: the story's arithmetic for a payroll night. Render workers = cores
(CPU-bound); email workers ≈ cores × (1 + wait/CPU) (IO-bound) but the send rate is bound by
the lowest of the provider rate, the concurrency limit × 1/send time and the workers. The
stages are pipelined: the run ends when the slowest stage ends, plus one slip's latency.
Prints the expected finish, the slack before the deadline, machine-hours, and the naive
single loop for comparison. No database needed. Defaults are the story's figures.

Options:
  --employees <n>          slips (default: 50000)
  --render-ms <ms>         CPU time to render one slip (default: 800)
  --send-ms <ms>           wall time of one send (default: 1200)
  --send-cpu-ms <ms>       CPU part of one send (default: 20)
  --provider-rate <n>      emails/s the provider accepts (default: 40)
  --concurrency-limit <n>  sends in flight across all workers (default: 45)
  --cores <n>              cores per machine (default: 8)
  --machines <n>           worker machines (default: 3)
  --start <HH:MM>          start of the run (default: 02:00)
  --deadline <HH:MM>       every slip delivered by (default: 09:00)
  --machine-hour-cost <n>  BDT per machine-hour (default: 40)
  --json                   the plan as one JSON object
  -h, --help               this help`;

function hoursMinutes(seconds: number): string {
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

export const plan: Command = {
  path: ['plan'],
  summary: 'capacity planner: workers, binding limit, finish time, slack',
  help,
  run(argv, io) {
    const s = { type: 'string' } as const;
    const { values } = parse(
      argv,
      {
        employees: s,
        'render-ms': s,
        'send-ms': s,
        'send-cpu-ms': s,
        'provider-rate': s,
        'concurrency-limit': s,
        cores: s,
        machines: s,
        start: s,
        deadline: s,
        'machine-hour-cost': s,
        json: { type: 'boolean' },
        story: { type: 'boolean' },
        costs: s,
        rate: s,
        'max-load': s,
      },
      help,
    );
    if (values.help) return (io.out(help), 0);
    const storyOnly = (['render-ms', 'send-ms', 'send-cpu-ms', 'concurrency-limit', 'machines'] as const).filter((k) => values[k] !== undefined);
    if (!values.story && storyOnly.length) throw new UsageError(`--${storyOnly[0]} is the story's planner: add --story (the default plans on measured costs)`);
    if (!values.story) {
      const file = values.costs ?? (existsSync(BENCH_COSTS_FILE) ? BENCH_COSTS_FILE : COMMITTED_COSTS_FILE);
      if (!existsSync(file)) throw new CliError(`no measured costs at ${path.resolve(file)}: run \`npm run bench -- --json\` first, or give --costs FILE`);
      let costs;
      try {
        costs = parseCosts(JSON.parse(readFileSync(file, 'utf8')), file);
      } catch (error) {
        throw new CliError(error instanceof SyntaxError ? `${file} is not JSON: ${error.message}` : (error as Error).message);
      }
      let window: number;
      try {
        window = windowSeconds(values.start ?? '02:00', values.deadline ?? '09:00');
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      try {
        const night = planNight(costs, {
          employees: numberFlag(values.employees, 'employees', 50_000, { integer: true, min: 1 }),
          providerRate: numberFlag(values['provider-rate'], 'provider-rate', EMAIL_PROVIDER_LIMITS.rate.perSecond, { min: 0.001 }),
          windowSeconds: window,
          coresPerMachine: numberFlag(values.cores, 'cores', 8, { integer: true, min: 1 }),
          machineHourCost: numberFlag(values['machine-hour-cost'], 'machine-hour-cost', 40, { min: 0 }),
          maxLoad: numberFlag(values['max-load'], 'max-load', 0.75, { min: 0.01, max: 1 }),
          ...(values.rate !== undefined
            ? { slipsPerSecond: values.rate === 'fastest' || values.rate === 'deadline' ? values.rate : numberFlag(values.rate, 'rate', 1, { min: 0.001 }) }
            : {}),
        });
        if (values.json) io.out(JSON.stringify({ costsFile: file, ...night }));
        else for (const line of [`costs: ${file}`, ...formatNight(night, hoursMinutes)]) io.out(line);
        return 0;
      } catch (error) {
        if (error instanceof CostsError) throw new UsageError(error.message);
        throw error;
      }
    }
    const input: PlanInput = {
      employees: numberFlag(values.employees, 'employees', 50_000, { integer: true, min: 0 }),
      renderMs: numberFlag(values['render-ms'], 'render-ms', 800, { min: 0.001 }),
      sendMs: numberFlag(values['send-ms'], 'send-ms', 1200, { min: 0.001 }),
      sendCpuMs: numberFlag(values['send-cpu-ms'], 'send-cpu-ms', 20, { min: 0.001 }),
      providerRate: numberFlag(values['provider-rate'], 'provider-rate', EMAIL_PROVIDER_LIMITS.rate.perSecond, { min: 0.001 }),
      concurrencyLimit: numberFlag(values['concurrency-limit'], 'concurrency-limit', EMAIL_PROVIDER_LIMITS.concurrency.max, { integer: true, min: 1 }),
      cores: numberFlag(values.cores, 'cores', 8, { integer: true, min: 1 }),
      machines: numberFlag(values.machines, 'machines', 3, { integer: true, min: 1 }),
      start: values.start ?? '02:00',
      deadline: values.deadline ?? '09:00',
      machineHourCost: numberFlag(values['machine-hour-cost'], 'machine-hour-cost', 40, { min: 0 }),
    };
    let result;
    try {
      result = planCapacity(input);
    } catch (error) {
      if (error instanceof PlanInputError) throw new UsageError(error.message);
      throw error;
    }
    if (values.json) io.out(JSON.stringify(result));
    else for (const line of formatPlan(result)) io.out(line);
    return 0;
  },
};

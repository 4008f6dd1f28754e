import { formatPlan, planCapacity, PlanInputError, type PlanInput } from '@beton/payroll/plan';
import { numberFlag, parse, UsageError, type Command } from '../args.ts';

const help = `Usage: beton plan [--employees 50000] [--render-ms 800] [--send-ms 1200] [--provider-rate 40]
                  [--cores 8] [--machines 3] [--start 02:00] [--deadline 09:00]
                  [--send-cpu-ms 20] [--concurrency-limit 45] [--machine-hour-cost 40] [--json]

The capacity planner: the story's arithmetic for a payroll night. Render workers = cores
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

export const plan: Command = {
  path: ['plan'],
  summary: 'capacity planner: workers, binding limit, finish time, slack',
  help,
  async run(argv, io) {
    const s = { type: 'string' } as const;
    const { values } = parse(
      argv,
      {
        employees: s, 'render-ms': s, 'send-ms': s, 'send-cpu-ms': s, 'provider-rate': s, 'concurrency-limit': s,
        cores: s, machines: s, start: s, deadline: s, 'machine-hour-cost': s, json: { type: 'boolean' },
      },
      help,
    );
    if (values.help) return io.out(help), 0;
    const input: PlanInput = {
      employees: numberFlag(values.employees, 'employees', 50_000, { integer: true, min: 0 }),
      renderMs: numberFlag(values['render-ms'], 'render-ms', 800, { min: 0.001 }),
      sendMs: numberFlag(values['send-ms'], 'send-ms', 1200, { min: 0.001 }),
      sendCpuMs: numberFlag(values['send-cpu-ms'], 'send-cpu-ms', 20, { min: 0.001 }),
      providerRate: numberFlag(values['provider-rate'], 'provider-rate', 40, { min: 0.001 }),
      concurrencyLimit: numberFlag(values['concurrency-limit'], 'concurrency-limit', 45, { integer: true, min: 1 }),
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

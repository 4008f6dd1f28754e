/**
 * A payroll run's status (`payroll_runs.status`, the `PayrollRunStatus` enum):
 *
 *   enqueuing ──(its slips enqueued)──▶ running ──(no slip job open)──▶ completed
 *       └──(no employee to pay)────────────────────────────────────────▶ completed
 *   completed ──(a resend of its month, an admin's retry: a slip job open again)──▶ running
 *
 * - `enqueuing`: the fan-out inserted the run and is enqueuing its slips in the same transaction
 *   (fanout.ts); nobody outside that transaction sees it so.
 * - `running → completed` and back: the `jobs` trigger (`payroll_run_open_slip_jobs`, after every
 *   statement that touches a run's slip jobs) and the retention pass's catch-up (retention.ts).
 * The database refuses any other change (db/src/status-machine.ts).
 */
import { PayrollRunStatus } from '@beton/db/enums';
import { defineStatusMachine } from '@beton/db/status-machine';

export const runStatus = defineStatusMachine<PayrollRunStatus>({
  table: 'payroll_runs',
  initial: [PayrollRunStatus.enqueuing],
  transitions: {
    enqueuing: ['running', 'completed'],
    running: ['completed'],
    completed: ['running'],
  },
});

/**
 * A row's status machine: which status may follow which. One is defined next to the code that
 * moves each table's `status` (payroll runs: packages/payroll/src/run-status.ts; email
 * deliveries: packages/payroll/src/delivery-status.ts; month exports:
 * packages/dashboard/src/exports/status.ts; jobs have their own, packages/jobs/src/transitions.ts).
 *
 * The database holds every status change to it: a `<table>_status_machine` trigger (BEFORE
 * UPDATE OF status, migration 20261206093000_status_machines) refuses an edge its arguments do
 * not list, whichever statement makes it (a service, a trigger, an operator's psql), with
 * `check_violation` ("illegal status transition of payroll_runs …: completed → enqueuing").
 * Each machine's test (packages/payroll/test/status-machines.test.ts,
 * packages/dashboard/test/export-status.test.ts) checks that the trigger lists exactly its
 * edges and that the database takes every edge and refuses every other change; the suites that
 * drive the flows (fan-out, run completion, email, events, exports) then run every status change
 * the code makes through the trigger.
 */
export interface StatusMachine<S extends string> {
  /** The table whose `status` column it governs. */
  readonly table: string;
  /** Every status, in the order a row usually goes through them. */
  readonly statuses: readonly S[];
  /** The statuses a row is inserted with. */
  readonly initial: readonly S[];
  /** For each status, the statuses it may move to (staying is not a move). */
  readonly transitions: Readonly<Record<S, readonly S[]>>;
  canTransition(from: S, to: S): boolean;
  /** Every edge as 'from→to' (the trigger's arguments). */
  edges(): Array<`${S}→${S}`>;
  /** The statuses a row may be in to move to `to`. */
  sourcesOf(to: S): S[];
  /** Statuses with no way out. */
  final(): S[];
}

export function defineStatusMachine<const S extends string>(def: {
  table: string;
  initial: readonly S[];
  transitions: Readonly<Record<S, readonly S[]>>;
}): StatusMachine<S> {
  const statuses = Object.keys(def.transitions) as S[];
  const canTransition = (from: S, to: S) => def.transitions[from].includes(to);
  return {
    table: def.table,
    statuses,
    initial: def.initial,
    transitions: def.transitions,
    canTransition,
    edges: () => statuses.flatMap((from) => def.transitions[from].map((to) => `${from}→${to}` as const)),
    sourcesOf: (to) => statuses.filter((from) => canTransition(from, to)),
    final: () => statuses.filter((s) => def.transitions[s].length === 0),
  };
}

/** The SQL list `('queued', 'building')` of some statuses (for a statement's `status in …`). */
export function statusListSql(statuses: readonly string[]): string {
  return `(${statuses.map((s) => `'${s.replace(/'/g, "''")}'`).join(', ')})`;
}

/** Every change between two different statuses, and whether the machine allows it (for the tests that hold the database to it). */
export function statusChanges<S extends string>(machine: StatusMachine<S>): Array<{ from: S; to: S; allowed: boolean }> {
  return machine.statuses.flatMap((from) => machine.statuses.filter((to) => to !== from).map((to) => ({ from, to, allowed: machine.canTransition(from, to) })));
}

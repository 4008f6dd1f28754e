import type { AnyJobDefinition } from './definition.ts';

/**
 * The rows a job belongs to, as the application declares them: columns it added to `jobs`
 * (shown to its users, used to scope its queries). The engine knows none of them; it builds its
 * statements from the declaration once per process (the enqueue's insert, the claim's copy onto
 * the attempt, the recurring jobs' read), so their text stays fixed. An application without
 * links declares none. Beton's: @beton/db/job-links (company, payroll run, employee).
 */
export interface JobLinkColumn {
  /** The column of `jobs` (an SQL identifier: lower case, digits, underscores). */
  column: string;
  /** Its SQL type: uuid and text take strings, int and bigint numbers. */
  type: 'uuid' | 'text' | 'int' | 'bigint';
  /** `job_attempts` has a column of the same name: the claim copies it onto each attempt. */
  onAttempts?: boolean;
  /**
   * The link a recurring job never has (Beton: the payroll run). At most one, and it must be on
   * the attempts: the recurring jobs' read (stats.ts) selects the attempts without it, through
   * an index that begins with it.
   */
  group?: boolean;
}

/** Link key (the `links` function's field, e.g. `companyId`) → its column. */
export type JobLinkColumns = Readonly<Record<string, JobLinkColumn>>;

/** What a definition's `links` returns for declaration `Spec`: a value (or nothing) per declared key. */
export type JobLinkValues<Spec extends JobLinkColumns> = {
  [K in keyof Spec]?: (Spec[K]['type'] extends 'int' | 'bigint' ? number : string) | undefined;
};

/** No links (a definition that declares none). */
export const NO_LINKS: JobLinkColumns = Object.freeze({});

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
const TYPES = new Set<string>(['uuid', 'text', 'int', 'bigint']);
/** Columns of `jobs` and `job_attempts` the engine writes itself: not links. */
const RESERVED = new Set([
  'id',
  'task_name',
  'queue',
  'payload',
  'status',
  'max_attempts',
  'run_at',
  'idempotency_key',
  'key',
  'priority',
  'updated_at',
  'job_id',
  'attempt',
  'worker_id',
]);

export class JobLinksError extends Error {
  override readonly name = 'JobLinksError';
}

/**
 * Checks a declaration (its names go into SQL text) and returns it, its literal types kept. The
 * engine checks the declaration of its definitions again when it builds its statements
 * (linkColumnsOf), so a plain object works as well (one in a package that cannot import the engine).
 */
export function defineLinks<const Spec extends JobLinkColumns>(columns: Spec): Spec {
  checkLinks(columns);
  return columns;
}

function checkLinks(columns: JobLinkColumns): void {
  let groups = 0;
  for (const [key, c] of Object.entries(columns)) {
    if (!IDENTIFIER.test(c.column) || RESERVED.has(c.column)) throw new JobLinksError(`Link "${key}": "${c.column}" is not a column a link can use`);
    if (!TYPES.has(c.type)) throw new JobLinksError(`Link "${key}": type "${c.type}" is not one of ${[...TYPES].join(', ')}`);
    if (c.group && !c.onAttempts) throw new JobLinksError(`Link "${key}": the group link must be on the attempts (onAttempts: true)`);
    if (c.group) groups++;
  }
  if (groups > 1) throw new JobLinksError('At most one link is the group');
  if (new Set(Object.values(columns).map((c) => c.column)).size !== Object.keys(columns).length) throw new JobLinksError('Two links name the same column');
}

/**
 * The one declaration the definitions of a registry share (each linking definition carries it
 * in `linkColumns`); NO_LINKS when none links. Two different declarations are an error: a
 * process's statements are built from one.
 */
export function linkColumnsOf(definitions: readonly AnyJobDefinition[]): JobLinkColumns {
  let found: JobLinkColumns | undefined;
  for (const def of definitions) {
    const spec = def.linkColumns;
    if (!spec || spec === found) continue;
    if (found && JSON.stringify(found) !== JSON.stringify(spec))
      throw new JobLinksError(`Job "${def.name}" declares other link columns than the registry's other jobs: one declaration per application`);
    found ??= spec;
  }
  if (!found) return NO_LINKS;
  checkLinks(found);
  return found;
}

/** The group link's column (see JobLinkColumn.group), if any. */
export function groupColumn(spec: JobLinkColumns): string | undefined {
  return Object.values(spec).find((c) => c.group)?.column;
}

/** The link columns `job_attempts` carries a copy of. */
export function attemptColumns(spec: JobLinkColumns): string[] {
  return Object.values(spec)
    .filter((c) => c.onAttempts)
    .map((c) => c.column);
}

/**
 * The link values of one job, in the declaration's order (null where absent). A key the
 * declaration does not name is an error, never dropped.
 */
export function linkValues(spec: JobLinkColumns, jobName: string, links: Readonly<Record<string, unknown>>): Array<string | number | null> {
  for (const key of Object.keys(links)) {
    if (!Object.hasOwn(spec, key))
      throw new JobLinksError(`Job "${jobName}" links "${key}", which is not a declared link (declared: ${Object.keys(spec).join(', ') || 'none'})`);
  }
  return Object.keys(spec).map((key) => (links[key] ?? null) as string | number | null);
}

import { JOB_STATUSES, queueStats, retryFailedJobs, supersededJobs, type JobStatus } from '@beton/jobs';
import { writeAuditEntry } from '@beton/db';
import { listJobsInStatus } from '@beton/dashboard/admin';
import { cliActor, numberFlag, parse, UsageError, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';
import { formatTable } from '../table.ts';

const statsHelp = `Usage: beton jobs stats [--json]

Jobs per queue and status (queued, running, retrying, done, failed, superseded), from the jobs table.

Options:
  --json      one JSON object: { "<queue>": { "<status>": n, ... }, ... }
  -h, --help  this help`;

export const jobsStats: Command = {
  path: ['jobs', 'stats'],
  summary: 'jobs per queue and status',
  help: statsHelp,
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' } }, statsHelp);
    if (values.help) return (io.out(statsHelp), 0);
    const stats = await usingDatabase((db) => queueStats(db.pool), io.err);
    if (values.json) {
      io.out(JSON.stringify(stats));
      return 0;
    }
    const queues = Object.keys(stats).sort();
    if (queues.length === 0) {
      io.out('No jobs yet.');
      return 0;
    }
    const total = (r: Record<JobStatus, number>) => JOB_STATUSES.reduce((n, s) => n + r[s], 0);
    const rows = queues.map((q) => [q, ...JOB_STATUSES.map((s) => stats[q]![s]), total(stats[q]!)]);
    const sums = JOB_STATUSES.map((s) => queues.reduce((n, q) => n + stats[q]![s], 0));
    rows.push(['all queues', ...sums, sums.reduce((a, b) => a + b, 0)]);
    for (const line of formatTable(['queue', ...JOB_STATUSES, 'total'], rows)) io.out(line);
    return 0;
  },
};

const listHelp = `Usage: beton jobs list [--status failed] [--limit 50] [--queue <queue>] [--json]

Jobs in one status, most recently updated first: id, task, attempts, error code, last error.

Options:
  --status <s>  ${JOB_STATUSES.join(' | ')} (default: failed — the dead-letter queue)
  --limit <n>   at most n rows (default: 50)
  --queue <q>   only this queue
  --json        one JSON array
  -h, --help    this help`;

export const jobsList: Command = {
  path: ['jobs', 'list'],
  summary: 'jobs in a status (default: failed) with their last error',
  help: listHelp,
  async run(argv, io) {
    const { values } = parse(argv, { status: { type: 'string' }, limit: { type: 'string' }, queue: { type: 'string' }, json: { type: 'boolean' } }, listHelp);
    if (values.help) return (io.out(listHelp), 0);
    const status = (values.status ?? 'failed') as JobStatus;
    if (!JOB_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${JOB_STATUSES.join(', ')}, got "${values.status}"`);
    const limit = numberFlag(values.limit, 'limit', 50, { integer: true, min: 1, max: 100_000 });
    const { rows, total } = await usingDatabase((db) => listJobsInStatus(db.pool, { status, queue: values.queue, limit }), io.err);
    if (values.json) {
      io.out(JSON.stringify(rows));
      return 0;
    }
    if (rows.length === 0) {
      io.out(`No ${status} jobs${values.queue ? ` in ${values.queue}` : ''}.`);
      return 0;
    }
    const table = formatTable(
      ['id', 'task', 'attempts', 'error code', 'last error'],
      rows.map((r) => [r.id, r.task, `${r.attempts}/${r.maxAttempts}`, r.errorCode ?? '-', r.lastError ?? '-']),
    );
    for (const line of table) io.out(line);
    io.out(
      total > rows.length
        ? `${rows.length} of ${total.toLocaleString('en-US')} ${status} jobs (--limit to see more)`
        : `${total} ${status} job${total === 1 ? '' : 's'}`,
    );
    return 0;
  },
};

const retryHelp = `Usage: beton jobs retry <id>...
       beton jobs retry --all-failed

Puts failed jobs (the dead-letter queue) back in their queue with a fresh attempt budget;
their earlier attempts stay in the history. Recorded in the audit log as 'cli:<user>'.
A superseded job (another attempt at the same slip was delivered) is not retried.

Options:
  --all-failed  every failed job
  -h, --help    this help`;

export const jobsRetry: Command = {
  path: ['jobs', 'retry'],
  summary: 'retry failed jobs by id, or all of them',
  help: retryHelp,
  async run(argv, io) {
    const { values, positionals } = parse(argv, { 'all-failed': { type: 'boolean' } }, retryHelp, { positionals: true });
    if (values.help) return (io.out(retryHelp), 0);
    const all = values['all-failed'] === true;
    if (all && positionals.length) throw new UsageError('give job ids or --all-failed, not both', retryHelp);
    if (!all && !positionals.length) throw new UsageError('give the ids of the jobs to retry, or --all-failed', retryHelp);
    const ids = positionals.map((p) => {
      if (!/^\d+$/.test(p) || !Number.isSafeInteger(Number(p)) || Number(p) < 1) throw new UsageError(`job ids are whole numbers, got "${p}"`);
      return Number(p);
    });
    const actor = cliActor();
    const { retried, superseded } = await usingDatabase(
      async (db) => ({
        retried: await retryFailedJobs(db.pool, all ? { allFailed: true } : { ids }, { actor, audit: writeAuditEntry }),
        // A superseded job (its slip was delivered by another attempt, R13) is never retried: say why.
        superseded: all ? new Map<number, string>() : await supersededJobs(db.pool, ids),
      }),
      io.err,
    );
    for (const [id, by] of superseded) io.err(`Job ${id} was superseded by ${by}: its work is done; retrying it would do it twice.`);
    if (retried.length === 0) {
      io.out(all ? 'No failed jobs to retry.' : 'None of those jobs is failed; nothing retried.');
      return all ? 0 : 1;
    }
    const shown = retried.length > 20 ? `${retried.slice(0, 20).join(', ')}, …` : retried.join(', ');
    io.out(`Retried ${retried.length} job${retried.length === 1 ? '' : 's'} (as ${actor}): ${shown}`);
    const skipped = ids.filter((id) => !retried.includes(id));
    if (skipped.length) {
      io.err(`Not retried (not failed or not found): ${skipped.join(', ')}`);
      return 1;
    }
    return 0;
  },
};

import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, type AnyJobDefinition } from '@beton/jobs';
import type { z } from 'zod';
import { CliError, parse, UsageError, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';

const known = (jobDefinitions as readonly AnyJobDefinition[]).map((d) => `${d.name} (${d.queue})`).join(', ');

const help = `Usage: beton enqueue <task> '<json payload>' [--run-at <ISO time>]

Enqueues one job: its payload is checked against the definition's schema first, then the
jobs row and the queue entry are written in one transaction. A job with the same
idempotency key already queued or done is returned instead of a second one.

Options:
  --run-at <t>  not before this time (a delayed job), e.g. 2026-12-01T02:30:00+06:00
  -h, --help    this help

Tasks: ${known}

Example:
  beton enqueue noop '{"key":"smoke-1"}'`;

/** zod issues as one line: `employeeId: expected number, received string; month: ...`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(payload)'}: ${i.message}`).join('; ');
}

export const enqueue: Command = {
  path: ['enqueue'],
  summary: 'enqueue one job with a JSON payload',
  help,
  async run(argv, io) {
    const { values, positionals } = parse(argv, { 'run-at': { type: 'string' } }, help, { positionals: true });
    if (values.help) return (io.out(help), 0);
    const [task, json, ...extra] = positionals;
    if (!task) throw new UsageError('missing <task>', help);
    if (json === undefined) throw new UsageError(`missing the JSON payload for "${task}" (e.g. '{}')`, help);
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}" (quote the JSON payload as one argument)`, help);
    const def = (jobDefinitions as readonly AnyJobDefinition[]).find((d) => d.name === task);
    if (!def) throw new UsageError(`unknown task "${task}". Tasks: ${known}`);
    let payload: unknown;
    try {
      payload = JSON.parse(json);
    } catch (error) {
      throw new UsageError(`the payload is not valid JSON (${(error as Error).message}): ${json.length > 60 ? `${json.slice(0, 59)}…` : json}`);
    }
    const parsed = def.schema.safeParse(payload);
    if (!parsed.success) throw new UsageError(`invalid payload for "${task}": ${describeIssues(parsed.error)}`);
    let runAt: Date | undefined;
    if (values['run-at'] !== undefined) {
      runAt = new Date(values['run-at']);
      if (Number.isNaN(runAt.getTime())) throw new UsageError(`--run-at must be an ISO time such as 2026-12-01T02:30:00+06:00, got "${values['run-at']}"`);
    }
    const job = await usingDatabase(async (db) => {
      const client = createJobClient(db.pool, jobDefinitions as readonly AnyJobDefinition[]);
      try {
        return await client.enqueue(task, payload, runAt ? { runAt } : {});
      } catch (error) {
        throw new CliError(`could not enqueue "${task}": ${(error as Error).message.split('\n')[0]}`);
      }
    }, io.err);
    io.out(
      job.created
        ? `Enqueued ${task} as job ${job.id} (key ${job.idempotencyKey}, queue ${def.queue}${runAt ? `, not before ${runAt.toISOString()}` : ''})`
        : `Already enqueued: job ${job.id} (key ${job.idempotencyKey}) is ${job.status}; nothing new was added`,
    );
    return 0;
  },
};

/**
 * Link columns are the application's (links.ts): the engine writes the declared ones on enqueue,
 * copies those on the attempts at the claim, reads the recurring jobs without the group link,
 * and refuses a link it was not told about. The fixture's declaration uses two of the test
 * database's link columns under names of its own.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { PermanentError } from '../src/errors.ts';
import { claimStatement } from '../src/engine/sql/claim.ts';
import { defineLinks, JobLinksError, linkColumnsOf, NO_LINKS } from '../src/links.ts';
import { recurringFailingSeconds } from '../src/stats.ts';
import type { RunningWorker } from '../src/engine/worker.ts';
import { jobRow, testWorker, waitFor } from './helpers.ts';

const fixtureLinks = defineLinks({
  ownerId: { column: 'company_id', type: 'uuid' },
  batchId: { column: 'payroll_run_id', type: 'uuid', onAttempts: true, group: true },
});

const linked = defineJob({
  name: 'test-linked',
  queue: 'test-main',
  schema: z.object({ key: z.string(), ownerId: z.string(), batchId: z.string().optional() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => `linked:${p.key}`,
  linkColumns: fixtureLinks,
  links: (p) => ({ ownerId: p.ownerId, batchId: p.batchId }),
});

/** Links a key nobody declared: a compile error in defineJob (below), so built by hand here; refused at enqueue. */
const strayBase = defineJob({
  name: 'test-stray',
  queue: 'test-main',
  schema: z.object({ key: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => `stray:${p.key}`,
  linkColumns: fixtureLinks,
});
const stray = { ...strayBase, links: (p: { key: string }) => ({ ownerId: randomUUID(), shelfId: p.key }) } as unknown as typeof strayBase;

defineJob({
  name: 'test-typed',
  queue: 'test-main',
  schema: z.object({ key: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => p.key,
  linkColumns: fixtureLinks,
  // @ts-expect-error -- the declaration types `ownerId` (a uuid: a string)
  links: (p) => ({ ownerId: p.key.length }),
});
defineJob({
  name: 'test-typed-keys',
  queue: 'test-main',
  schema: z.object({ key: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => p.key,
  linkColumns: fixtureLinks,
  // @ts-expect-error -- `shelfId` is not a declared link
  links: (p) => ({ ownerId: p.key, shelfId: p.key }),
});
defineJob({
  name: 'test-typed-none',
  queue: 'test-main',
  schema: z.object({ key: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => p.key,
  // @ts-expect-error -- no declaration: no link
  links: (p) => ({ ownerId: p.key }),
});

describe('declared links', () => {
  it('a declaration is checked: its names go into SQL text', () => {
    expect(() => defineLinks({ a: { column: 'a; drop table jobs', type: 'uuid' } })).toThrow(JobLinksError);
    expect(() => defineLinks({ a: { column: 'status', type: 'text' } })).toThrow(/not a column a link can use/);
    expect(() => defineLinks({ a: { column: 'a', type: 'jsonb' as 'text' } })).toThrow(/type "jsonb"/);
    expect(() => defineLinks({ a: { column: 'a', type: 'uuid', group: true } })).toThrow(/must be on the attempts/);
    expect(() =>
      defineLinks({ a: { column: 'a', type: 'uuid', onAttempts: true, group: true }, b: { column: 'b', type: 'uuid', onAttempts: true, group: true } }),
    ).toThrow(/At most one/);
    expect(() => defineLinks({ a: { column: 'a', type: 'uuid' }, b: { column: 'a', type: 'int' } })).toThrow(/same column/);
  });

  it('a registry has one declaration, or none', () => {
    expect(linkColumnsOf([linked, stray])).toBe(fixtureLinks);
    const plain = defineJob({ name: 'p', queue: 'q', schema: z.object({}), timeoutMs: 1, idempotencyKey: () => 'p' });
    expect(linkColumnsOf([plain])).toBe(NO_LINKS);
    const other = defineJob({
      name: 'o',
      queue: 'q',
      schema: z.object({}),
      timeoutMs: 1,
      idempotencyKey: () => 'o',
      linkColumns: defineLinks({ x: { column: 'employee_id', type: 'int' } }),
      links: () => ({ x: 1 }),
    });
    expect(() => linkColumnsOf([linked, other])).toThrow(/other link columns/);
  });

  it('the claim copies only the columns the attempts carry, under a name of its own', () => {
    expect(claimStatement(NO_LINKS).name).toBe('jobs_claim');
    expect(claimStatement(NO_LINKS).text).not.toMatch(/payroll_run_id|company_id/);
    const withLinks = claimStatement(fixtureLinks);
    expect(withLinks.name).toBe('jobs_claim_payroll_run_id');
    expect(withLinks.text).toMatch(/insert into job_attempts \(job_id, attempt, worker_id, task_name, payroll_run_id\)/);
    expect(withLinks.text).not.toMatch(/company_id/);
  });
});

describe('declared links on a database', () => {
  let db: TestDatabase;
  let worker: RunningWorker;

  beforeAll(async () => {
    db = await createTestDatabase('links');
    worker = await testWorker(db.pool, {
      definitions: [linked, stray],
      queue: 'test-main',
      concurrency: 2,
      handlers: {
        // A job of a batch fails: the task's recurring runs (no batch) must not see it.
        'test-linked': async (p: { batchId?: string | undefined }) => {
          if (p.batchId) throw new PermanentError('rejected', 'a batch job fails');
        },
        'test-stray': async () => {},
      },
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await db?.drop();
  });

  it('writes the declared columns, copies the group onto the attempt, and reads recurring jobs without it', async () => {
    const jobs = createJobClient(db.pool, [linked, stray]);
    const owner = randomUUID();
    const batch = randomUUID();
    const alone = await jobs.enqueue('test-linked', { key: 'b', ownerId: owner });
    await waitFor('the job without a batch done', async () => (await jobRow(db.pool, alone.id)).status === 'done', 10_000);
    // The batch job's attempt ends last (failed).
    const inBatch = await jobs.enqueue('test-linked', { key: 'a', ownerId: owner, batchId: batch });
    await waitFor('the batch job failed', async () => (await jobRow(db.pool, inBatch.id)).status === 'failed', 10_000);

    const { rows } = await db.pool.query<{ id: number; company_id: string; payroll_run_id: string | null; employee_id: number | null; copied: string | null }>(
      `select j.id, j.company_id, j.payroll_run_id, j.employee_id, a.payroll_run_id as copied
       from jobs j join job_attempts a on a.job_id = j.id where j.id = any($1) order by j.id`,
      [[alone.id, inBatch.id]],
    );
    expect(rows).toEqual([
      { id: alone.id, company_id: owner, payroll_run_id: null, employee_id: null, copied: null },
      { id: inBatch.id, company_id: owner, payroll_run_id: batch, employee_id: null, copied: batch },
    ]);
    // Only the run without a batch is a recurring run of its task (group link null): it succeeded.
    expect(await recurringFailingSeconds(db.pool, ['test-linked'], fixtureLinks)).toEqual({ 'test-linked': 0 });
    // Without the declaration every attempt counts, the failed batch job's last.
    expect((await recurringFailingSeconds(db.pool, ['test-linked'], NO_LINKS))['test-linked']).toBeGreaterThan(0);
  });

  it('refuses a link the declaration does not name, writing nothing', async () => {
    const jobs = createJobClient(db.pool, [linked, stray]);
    await expect(jobs.enqueue('test-stray', { key: 'x' })).rejects.toThrow(/links "shelfId", which is not a declared link \(declared: ownerId, batchId\)/);
    const { rows } = await db.pool.query(`select 1 from jobs where task_name = 'test-stray'`);
    expect(rows).toHaveLength(0);
  });
});

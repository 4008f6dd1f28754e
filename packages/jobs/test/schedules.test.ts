import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { definitionSchedules, dueTimes, firstSeenDueTimes, nextDueTimes, parseSchedule, runScheduleTick, type ScheduleSource } from '../src/schedules.ts';

const monthly = defineJob({
  name: 'test-monthly',
  queue: 'test-main',
  schema: z.object({ companyId: z.string(), dueAt: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => `monthly:${p.companyId}:${p.dueAt}`,
});
const recurring = defineJob({
  name: 'test-recurring',
  queue: 'test-main',
  schema: z.object({ dueAt: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => `recurring:${p.dueAt}`,
  schedule: { cron: '*/15 * * * *', payload: (dueAt) => ({ dueAt }) },
});

describe('time-zone schedules', () => {
  it('02:00 on the 1st in Asia/Dhaka is 20:00 UTC the day before', () => {
    const due = dueTimes('0 2 1 * *', 'Asia/Dhaka', new Date('2026-11-30T19:58:00Z'), new Date('2026-11-30T20:01:00Z'));
    expect(due.map((d) => d.toISOString())).toEqual(['2026-11-30T20:00:00.000Z']);
    expect(nextDueTimes('0 2 1 * *', 'Asia/Dhaka', 2, new Date('2026-11-15T00:00:00Z')).map((d) => d.toISOString())).toEqual([
      '2026-11-30T20:00:00.000Z',
      '2026-12-31T20:00:00.000Z',
    ]);
  });

  it('firstSeenDueTimes keeps each due time once, and forgets old ones', () => {
    const firstSeen = firstSeenDueTimes(10 * 60_000);
    const t = (scheduleId: string, iso: string) => ({ scheduleId, dueAt: new Date(iso) });
    const now = new Date('2026-12-01T02:03:00Z');
    expect(firstSeen([t('p:a', '2026-12-01T02:00:00Z'), t('p:b', '2026-12-01T02:00:00Z')], now)).toHaveLength(2);
    expect(firstSeen([t('p:a', '2026-12-01T02:00:00Z'), t('p:a', '2026-12-01T02:01:00Z')], now)).toEqual([t('p:a', '2026-12-01T02:01:00Z')]);
    // 11 minutes on, 02:00 is forgotten: were it met again, it would count as new.
    expect(firstSeen([t('p:a', '2026-12-01T02:00:00Z')], new Date('2026-12-01T02:11:00Z'))).toHaveLength(1);
  });

  it('refuses a malformed schedule with a message naming it', () => {
    expect(() => parseSchedule('0 2 32 * *', 'Asia/Dhaka')).toThrow(/Invalid schedule "0 2 32 \* \*" in Asia\/Dhaka/);
    expect(() => parseSchedule('0 2 1 * *', 'Mars/Olympus')).toThrow(/Invalid schedule/);
  });

  describe('the tick (injected clock, real PostgreSQL)', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('schedules');
    });
    afterAll(() => db?.drop());

    const companies: ScheduleSource = async () => [
      { id: 'payroll:dhaka', cron: '0 2 1 * *', timeZone: 'Asia/Dhaka', job: 'test-monthly', payload: (d) => ({ companyId: 'dhaka', dueAt: d.toISOString() }) },
      { id: 'payroll:utc', cron: '0 2 1 * *', timeZone: 'UTC', job: 'test-monthly', payload: (d) => ({ companyId: 'utc', dueAt: d.toISOString() }) },
    ];

    it('fires at 02:00 Asia/Dhaka, not at 02:00 UTC, and two ticks for the same minute enqueue once', async () => {
      const jobs = createJobClient(db.pool, [monthly, recurring]);
      const sources = [companies, async () => definitionSchedules([recurring])];
      const before = await runScheduleTick({ pool: db.pool, jobs, sources, now: new Date('2026-11-30T19:59:30Z'), lookbackMs: 60_000, by: 'a' });
      expect(before.enqueued.filter((e) => e.scheduleId.startsWith('payroll'))).toEqual([]);

      const at = new Date('2026-11-30T20:00:05Z'); // 02:00:05 in Dhaka
      const [a, b] = await Promise.all([
        runScheduleTick({ pool: db.pool, jobs, sources, now: at, lookbackMs: 60_000, by: 'scheduler-a' }),
        runScheduleTick({ pool: db.pool, jobs, sources, now: at, lookbackMs: 60_000, by: 'scheduler-b' }),
      ]);
      const fired = [...a.enqueued, ...b.enqueued];
      expect(fired.filter((e) => e.scheduleId === 'payroll:dhaka')).toHaveLength(1);
      expect(fired.filter((e) => e.scheduleId === 'payroll:utc')).toHaveLength(0);
      expect(fired.filter((e) => e.scheduleId === 'test-recurring')).toHaveLength(1); // 20:00 UTC is a */15 boundary
      // The tick that lost the due time skipped it and names the winner; a tick of the winner's
      // own, later, skips it without naming anyone.
      const dhaka = fired.find((e) => e.scheduleId === 'payroll:dhaka')!;
      const [winner, loser] = a.enqueued.includes(dhaka) ? ['scheduler-a', b] : ['scheduler-b', a];
      expect(loser.taken.filter((t) => t.scheduleId === 'payroll:dhaka')).toEqual([{ scheduleId: 'payroll:dhaka', dueAt: dhaka.dueAt, by: winner }]);
      const again = await runScheduleTick({ pool: db.pool, jobs, sources, now: at, lookbackMs: 60_000, by: winner });
      expect(again.enqueued).toEqual([]);
      expect(again.taken.filter((t) => t.scheduleId === 'payroll:dhaka')).toEqual([]);
      const rows = await db.pool.query(`select payload->>'companyId' as company from jobs where task_name = 'test-monthly'`);
      expect(rows.rows).toEqual([{ company: 'dhaka' }]);

      // The UTC company's 02:00 comes six hours later.
      const utc = await runScheduleTick({ pool: db.pool, jobs, sources, now: new Date('2026-12-01T02:00:10Z'), lookbackMs: 60_000, by: 'a' });
      expect(utc.enqueued.map((e) => e.scheduleId)).toContain('payroll:utc');
    });

    it('one schedule that cannot be read or enqueued does not hold the others back: each failure is reported, and tried again by the next tick', async () => {
      const jobs = createJobClient(db.pool, [monthly, recurring]);
      let payloadThrows = true;
      const sources: ScheduleSource[] = [
        async () => [
          {
            id: 'payroll:bad-cron',
            cron: '0 2 32 * *',
            timeZone: 'Asia/Dhaka',
            job: 'test-monthly',
            payload: (d) => ({ companyId: 'x', dueAt: d.toISOString() }),
          },
          {
            id: 'payroll:throws',
            cron: '0 2 1 * *',
            timeZone: 'Asia/Dhaka',
            job: 'test-monthly',
            payload: (d) => {
              if (payloadThrows) throw new Error('the company row could not be read');
              return { companyId: 'throws', dueAt: d.toISOString() };
            },
          },
          {
            id: 'payroll:good',
            cron: '0 2 1 * *',
            timeZone: 'Asia/Dhaka',
            job: 'test-monthly',
            payload: (d) => ({ companyId: 'good', dueAt: d.toISOString() }),
          },
        ],
        async () => {
          throw new Error('the companies could not be listed');
        },
      ];
      const at = new Date('2027-01-31T20:00:05Z'); // 02:00:05 on February 1 in Dhaka
      const first = await runScheduleTick({ pool: db.pool, jobs, sources, now: at, lookbackMs: 60_000, by: 'a' });
      expect(first.enqueued.map((e) => e.scheduleId)).toEqual(['payroll:good']);
      expect(first.failed.map((f) => [f.scheduleId, f.dueAt?.toISOString() ?? null, f.error.message])).toEqual([
        ['source 2', null, 'the companies could not be listed'],
        ['payroll:bad-cron', null, expect.stringMatching(/Invalid schedule "0 2 32 \* \*"/)],
        ['payroll:throws', '2027-01-31T20:00:00.000Z', 'the company row could not be read'],
      ]);
      // The failed due time was not recorded as enqueued: the next tick, once it can, enqueues it.
      payloadThrows = false;
      const next = await runScheduleTick({ pool: db.pool, jobs, sources, now: new Date(at.getTime() + 30_000), lookbackMs: 60_000, by: 'a' });
      expect(next.enqueued.map((e) => e.scheduleId)).toEqual(['payroll:throws']);
    });
  });
});

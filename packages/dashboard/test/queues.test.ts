import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuesOverview, RATE_WINDOW_S } from '../src/admin.ts';

describe('queues overview (admin)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('queues_overview');
  });
  afterAll(() => db?.drop());

  it('shows the email rate in use: attempts finished in the last 10 s under the provider key, against 40/s', async () => {
    const now = new Date();
    // 30 email attempts finished within the window, 5 just before it, 7 renders (another key: none).
    await db.pool.query(
      `with j as (
         insert into jobs (task_name, queue, payload, status, max_attempts, idempotency_key)
         select t, q, '{}', 'done', 6, t || '-' || i from (values ('send-slip-email', 'send-email', 35), ('render-slip', 'pdf-render', 7)) v(t, q, n), generate_series(1, v.n) i
         returning id, task_name, idempotency_key)
       insert into job_attempts (job_id, attempt, started_at, finished_at, outcome)
       select id, 1, $1::timestamptz - interval '20 seconds',
              case when task_name = 'send-slip-email' and split_part(idempotency_key, '-', 4)::int > 30 then $1::timestamptz - interval '11 seconds' else $1::timestamptz - interval '3 seconds' end,
              'done'
       from j`,
      [now],
    );
    const view = await queuesOverview(db.pool, now);
    expect(RATE_WINDOW_S).toBe(10);
    expect(view.rates).toEqual([{ key: 'email-provider', perSecond: 40, inUsePerSecond: 3 }]);
    expect(view.queues.find((q) => q.queue === 'send-email')?.counts.done).toBe(35);
  });
});

/**
 * One slip per employee and month (R13) when two attempts at it — the monthly run's email and
 * HR's resend — reach their turns under the rate limit at the same moment. Each must announce
 * itself (its outcome unknown) before it looks at the other: looking first, both saw nothing in
 * flight, both waited for their turns, and both sent. Judged from the provider's store.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { SupersededError, TransientError } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../src/mailer.ts';
import { sendSlipOnce } from '../src/one-slip.ts';
import { slipKey } from '../src/jobs/slip-payload.ts';

describe('two attempts at one slip whose turns come at once (R13)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  const MONTH = '2026-11';

  beforeAll(async () => {
    db = await createTestDatabase('one-slip-race');
    await seedDatabase(db.pool, { employees: 3, companies: 1, invalidRate: 0, seed: 7 });
    provider = await startProviderSimulator({ latencyMs: 300, latencySpreadMs: 0, ratePerSecond: 1000 });
  });
  afterAll(async () => {
    await provider?.close();
    await db?.drop();
  });

  it('the monthly email and a resend released together: one of them is sent, the other waits for it and is superseded', async () => {
    const employees = (await db.pool.query<{ id: number; company_id: string }>('select id, company_id from employees order by id')).rows;
    const mailer = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url });
    for (const { id: employeeId, company_id: companyId } of employees) {
      const monthly = { companyId, employeeId, month: MONTH };
      const resend = { ...monthly, resend: 1 };
      // Both slips rendered and stored; the resend recorded as HR's (so it counts as an attempt).
      await db.pool.query(`insert into slip_resends (employee_id, month, n, requested_by, job_id) values ($1, $2, 1, 'hr@test', 0)`, [employeeId, MONTH]);
      for (const p of [monthly, resend]) {
        await db.pool.query(`insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, $2, $3, $4, 'x', 4)`, [
          employeeId,
          MONTH,
          slipKey(p),
          Buffer.from('%PDF'),
        ]);
      }
      // The rate limit's turns: both attempts wait for theirs, which come at the same moment.
      let waiting = 0;
      let release!: () => void;
      const turns = new Promise<void>((r) => (release = r));
      const turn = async () => {
        if (++waiting === 2) release();
        await turns;
      };
      // Each attempt as the engine runs its job: again after a transient error (another attempt in flight).
      const attempt = async (payload: typeof monthly) => {
        for (let i = 0; i < 20; i++) {
          try {
            return await sendSlipOnce({ pool: db.pool, mailer, delivery: { beforeSend: i === 0 ? turn : async () => {} } }, payload);
          } catch (error) {
            if (error instanceof SupersededError) return 'superseded';
            if (!(error instanceof TransientError)) throw error;
            await sleep(error.retryAfterMs ?? 100);
          }
        }
        throw new Error('no attempt settled');
      };
      const outcomes = await Promise.all([attempt(monthly), attempt(resend)]);
      await sleep(500); // a second request would have landed by now (300 ms latency)
      const sent = [slipKey(monthly), slipKey(resend)].flatMap((key) => provider.messages({ customArgs: { idempotency_key: key } }));
      expect(sent, `employee ${employeeId}: ${JSON.stringify(outcomes)}`).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'superseded')).toHaveLength(1);
    }
  }, 120_000);
});

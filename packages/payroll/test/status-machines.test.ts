/**
 * The payroll run's and the email delivery's status machines (run-status.ts, delivery-status.ts)
 * are the ones the database holds: its triggers list exactly their edges, take each of them and
 * refuse every other change, whichever statement makes it.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { DeliveryStatus, PayrollRunStatus } from '@beton/db/enums';
import { heldStatusEdges } from '@beton/db/sql/status-machines';
import { statusChanges, type StatusMachine } from '@beton/db/status-machine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryStatus } from '../src/delivery-status.ts';
import { runStatus } from '../src/run-status.ts';

describe('status machines of payroll runs and email deliveries', () => {
  let db: TestDatabase;
  let companyId: string;
  beforeAll(async () => {
    db = await createTestDatabase('status_machines');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Machines Ltd') returning id`)).rows[0]!.id;
  });
  afterAll(() => db?.drop());

  /** Every change between two statuses on a fresh row: done when the machine allows it, refused (check_violation) when not. */
  async function holds<S extends string>(
    machine: StatusMachine<S>,
    insert: (status: S, n: number) => Promise<string>,
    alsoSet: (from: S, to: S) => string = () => '',
  ) {
    let n = 0;
    for (const { from, to, allowed } of statusChanges(machine)) {
      const id = await insert(from, n++);
      const change = db.pool.query(`update ${machine.table} set status = $2${alsoSet(from, to)} where id = $1`, [id, to]);
      if (allowed) await expect(change, `${from} → ${to}`).resolves.toMatchObject({ rowCount: 1 });
      else await expect(change, `${from} → ${to}`).rejects.toMatchObject({ code: '23514', message: expect.stringContaining(`${from} → ${to}`) });
    }
  }

  it('payroll runs: the enum, the machine, the trigger', async () => {
    expect([...runStatus.statuses].sort()).toEqual(Object.values(PayrollRunStatus).sort());
    expect((await heldStatusEdges(db.pool, 'payroll_runs')).sort()).toEqual(runStatus.edges().sort());
    expect(runStatus.final()).toEqual([]); // a completed run opens again for a resend of its month
    await holds(runStatus, async (status, n) => {
      const { rows } = await db.pool.query<{ id: string }>(
        `insert into payroll_runs (company_id, month, status, created_by) values ($1, $2, $3::"PayrollRunStatus", 'test') returning id`,
        [companyId, `${2000 + n}-01`, status],
      );
      return rows[0]!.id;
    });
  });

  it('email deliveries: the enum, the machine, the trigger; sent goes back only with its resend on proof counted', async () => {
    expect([...deliveryStatus.statuses].sort()).toEqual(Object.values(DeliveryStatus).sort());
    expect((await heldStatusEdges(db.pool, 'email_deliveries')).sort()).toEqual(deliveryStatus.edges().sort());
    expect(deliveryStatus.final()).toEqual([]);
    const insert = async (status: string, n: number | string) => {
      const { rows } = await db.pool.query<{ id: string }>(
        `insert into email_deliveries (idempotency_key, recipient, status) values ($1, 'a@example.com', $2::"DeliveryStatus") returning id`,
        [`machine:${n}`, status],
      );
      return rows[0]!.id;
    };
    // The one way back from sent is its SendGrid batch cancelled (settle.ts), counted in the same statement.
    await holds(deliveryStatus, insert, (from, to) => (from === 'sent' && to === 'sending' ? ', resent_on_proof = resent_on_proof + 1' : ''));
    // A late attempt (nothing counted) cannot put a sent key back.
    const sent = await insert('sent', 'late-attempt');
    await expect(db.pool.query(`update email_deliveries set status = 'sending' where id = $1`, [sent])).rejects.toMatchObject({
      code: '23514',
      message: expect.stringContaining('sent → sending without its batch cancelled'),
    });
  });
});

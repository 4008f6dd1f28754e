/**
 * A month export's status machine (src/exports/status.ts) is the one the database holds: its
 * trigger lists exactly the machine's edges, takes each of them and refuses every other change.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { heldStatusEdges } from '@beton/db/sql/status-machines';
import { statusChanges } from '@beton/db/status-machine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_STATUSES } from '../src/exports/kinds.ts';
import { exportStatus, OPEN_EXPORT_STATUSES } from '../src/exports/status.ts';

describe('month export status machine', () => {
  let db: TestDatabase;
  let companyId: string;
  beforeAll(async () => {
    db = await createTestDatabase('export_status');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Exports Ltd') returning id`)).rows[0]!.id;
  });
  afterAll(() => db?.drop());

  it('is the statuses the exports use, ready is final, and the trigger lists exactly its edges', async () => {
    expect([...exportStatus.statuses].sort()).toEqual([...EXPORT_STATUSES].sort());
    expect(exportStatus.final()).toEqual(['ready']);
    expect(OPEN_EXPORT_STATUSES.every((s) => exportStatus.transitions[s].length > 0)).toBe(true);
    expect((await heldStatusEdges(db.pool, 'month_exports')).sort()).toEqual(exportStatus.edges().sort());
  });

  it('the database takes every edge and refuses every other change (check_violation)', async () => {
    for (const { from, to, allowed } of statusChanges(exportStatus)) {
      const { rows } = await db.pool.query<{ id: string }>(
        `insert into month_exports (company_id, month, kind, status, filename, requested_by) values ($1, '2026-11', 'register-csv', $2, 'f.csv', 'test') returning id`,
        [companyId, from],
      );
      const change = db.pool.query(`update month_exports set status = $2 where id = $1`, [rows[0]!.id, to]);
      if (allowed) await expect(change, `${from} → ${to}`).resolves.toMatchObject({ rowCount: 1 });
      else await expect(change, `${from} → ${to}`).rejects.toMatchObject({ code: '23514', message: expect.stringContaining(`${from} → ${to}`) });
    }
  });
});

/**
 * The HR employees table over HTTP (employees.list through the real tRPC API, signed in):
 * server-side search, status filter and pagination, each over the HR's own company only.
 */
import { SLIP_STATUSES, type SlipStatus } from '@beton/dashboard';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WebFixture } from './fixtures.ts';
import { webApiSuite } from './http-api.ts';

const t = webApiSuite();
const { signIn, client } = t;

type Company = WebFixture['companies'][number];
type Hr = ReturnType<typeof client>;
interface Employee {
  id: number;
  code: string;
  name_latin: string;
  name_bengali: string;
  email: string;
  company_id: string;
}

async function employeesOf(companyId?: string): Promise<Employee[]> {
  const { rows } = await t.fx.pool.query<Employee>(
    `select id, code, name_latin, name_bengali, email, company_id::text from employees where $1::uuid is null or company_id = $1 order by code`,
    [companyId ?? null],
  );
  return rows;
}

/** The slip status the fixture gave employee number i (by id) of a company, for its month. */
function fixtureStatus(i: number): SlipStatus {
  if (i % 20 === 1 || i % 20 === 2) return 'failed';
  if (i === 3) return 'running';
  if (i % 20 === 4) return 'queued';
  return 'sent';
}

/** Every page of a listing, `limit` rows at a time, until the reported total is reached. */
async function allPages(hr: Hr, input: { search?: string; status?: SlipStatus }, limit: number) {
  const pages: Array<{ ids: number[]; total: number }> = [];
  for (let offset = 0; ; offset += limit) {
    const page = await hr.employees.list.query({ month: t.fx.month, ...input, limit, offset });
    pages.push({ ids: page.rows.map((r) => r.id), total: page.total });
    expect(page.rows.length).toBeLessThanOrEqual(limit);
    if (offset + limit >= page.total) break;
    expect(page.rows).toHaveLength(limit); // every page but the last is full
  }
  return pages;
}

const matches = (e: Employee, term: string) =>
  [e.code, e.name_latin, e.name_bengali, e.email].some((field) => field.toLowerCase().includes(term.toLowerCase()));

describe('employees table over HTTP', () => {
  let a: Company;
  let b: Company;
  let hr: Hr;
  beforeAll(async () => {
    [a, b] = t.fx.companies as [Company, Company];
    hr = client(await signIn(a.hrEmail, a.hrPassword));
  });

  it("search by name (Latin and Bengali) and by code returns exactly the matching rows of the HR's own company", async () => {
    const mine = await employeesOf(a.id);
    const everyone = await employeesOf();
    // A full name (so its family name and Bengali spelling too) that an employee of another company carries.
    const shared = mine.find((e) => everyone.some((o) => o.company_id !== a.id && o.name_latin === e.name_latin))!;
    expect(shared).toBeDefined();
    const terms = [
      shared.name_latin.split(' ')[1]!.toUpperCase(), // case-insensitive
      shared.name_bengali.split(' ')[1]!,
      shared.name_latin, // a full name
      mine[11]!.code, // E00012: every company has one
      mine[11]!.code.slice(0, -1).toLowerCase(), // e0001: a prefix, E00010..E00019
    ];
    for (const term of terms) {
      const expected = mine.filter((e) => matches(e, term)).map((e) => e.id);
      expect(expected.length, term).toBeGreaterThan(0);
      expect(everyone.filter((e) => e.company_id !== a.id && matches(e, term)).length, `${term} in other companies`).toBeGreaterThan(0);
      const page = await hr.employees.list.query({ month: t.fx.month, search: term, limit: 100, offset: 0 });
      expect(
        page.rows.map((r) => r.id).sort((x, y) => x - y),
        term,
      ).toEqual(expected.sort((x, y) => x - y));
      expect(page.total, term).toBe(expected.length);
    }
    const byCode = await hr.employees.list.query({ month: t.fx.month, search: mine[11]!.code, limit: 100, offset: 0 });
    expect(byCode.rows.map((r) => [r.id, r.code])).toEqual([[mine[11]!.id, mine[11]!.code]]);
    // Nothing of company B matches, whatever is searched: B's own HR finds the same term in B.
    const hrB = client(await signIn(b.hrEmail, b.hrPassword));
    const inB = await hrB.employees.list.query({ month: t.fx.month, search: mine[11]!.code, limit: 100, offset: 0 });
    expect(inB.rows).toHaveLength(1);
    expect(b.employeeIds).toContain(inB.rows[0]!.id);
    // LIKE's wildcards are searched as text, not patterns.
    expect((await hr.employees.list.query({ month: t.fx.month, search: '%', limit: 100, offset: 0 })).total).toBe(mine.filter((e) => matches(e, '%')).length);
    expect((await hr.employees.list.query({ month: t.fx.month, search: 'E_00', limit: 100, offset: 0 })).total).toBe(0);
  });

  it('pages are disjoint, ordered by code and together cover the set with the right total (with and without a filter)', async () => {
    const mine = await employeesOf(a.id);
    const pages = await allPages(hr, {}, 7);
    const ids = pages.flatMap((p) => p.ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(mine.map((e) => e.id)); // every row once, in code order
    expect(new Set(pages.map((p) => p.total))).toEqual(new Set([mine.length]));
    expect(pages).toHaveLength(Math.ceil(mine.length / 7));

    // Searched and paged: the pages cover exactly the matches.
    const term = mine[0]!.code.slice(0, 4); // E000: E00001..E00099
    const searched = (await allPages(hr, { search: term }, 10)).flatMap((p) => p.ids);
    expect(searched).toEqual(mine.filter((e) => matches(e, term)).map((e) => e.id));

    // Filtered by status and paged (the status filter's own query path).
    const sentPages = await allPages(hr, { status: 'sent' }, 10);
    const sent = sentPages.flatMap((p) => p.ids);
    const expectedSent = a.employeeIds.filter((_, i) => fixtureStatus(i) === 'sent');
    expect(new Set(sent).size).toBe(sent.length);
    expect([...sent].sort((x, y) => x - y)).toEqual([...expectedSent].sort((x, y) => x - y));
    expect(new Set(sentPages.map((p) => p.total))).toEqual(new Set([expectedSent.length]));
    // A page past the end is empty but still tells the total.
    expect(await hr.employees.list.query({ month: t.fx.month, status: 'sent', limit: 10, offset: 1000 })).toEqual({ rows: [], total: expectedSent.length });
    expect(await hr.employees.list.query({ month: t.fx.month, limit: 10, offset: 1000 })).toEqual({ rows: [], total: mine.length });
  });

  it('the status filter returns only rows with that status, and every employee of the company under exactly one', async () => {
    let sum = 0;
    for (const status of SLIP_STATUSES) {
      const expected = a.employeeIds.filter((_, i) => fixtureStatus(i) === status);
      const page = await hr.employees.list.query({ month: t.fx.month, status, limit: 100, offset: 0 });
      expect(
        page.rows.every((r) => r.slipStatus === status),
        status,
      ).toBe(true);
      expect(
        page.rows.map((r) => r.id).sort((x, y) => x - y),
        status,
      ).toEqual([...expected].sort((x, y) => x - y));
      expect(page.total, status).toBe(expected.length);
      sum += page.total;
    }
    expect(sum).toBe(a.employeeIds.length);
    // The failed rows say why; search and status combine.
    const failed = await hr.employees.list.query({ month: t.fx.month, status: 'failed', limit: 100, offset: 0 });
    expect(new Set(failed.rows.map((r) => r.lastErrorCode))).toEqual(new Set(['invalid_recipient', 'provider_unavailable']));
    const one = failed.rows[0]!;
    expect((await hr.employees.list.query({ month: t.fx.month, status: 'failed', search: one.code, limit: 100, offset: 0 })).rows.map((r) => r.id)).toEqual([
      one.id,
    ]);
    expect((await hr.employees.list.query({ month: t.fx.month, status: 'sent', search: one.code, limit: 100, offset: 0 })).total).toBe(0);
    // A month without any jobs: everyone is 'none'.
    const none = await hr.employees.list.query({ month: '2026-10', status: 'none', limit: 1, offset: 0 });
    expect(none.total).toBe(a.employeeIds.length);
  });
});

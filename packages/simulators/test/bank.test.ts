import { afterEach, describe, expect, it } from 'vitest';
import { startBankSimulator, type BankSimulator } from '../src/index.ts';

const KEY = 'bank-dev-key';
const sims: BankSimulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

async function bank(opts: Parameters<typeof startBankSimulator>[0] = {}): Promise<BankSimulator> {
  const b = await startBankSimulator(opts);
  sims.push(b);
  return b;
}

const api = (b: BankSimulator, path: string, init: RequestInit = {}) =>
  fetch(`${b.url}${path}`, { ...init, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', ...init.headers } });

const transfers = [
  { reference: 'payroll:2026-11:emp-1', accountNumber: '0011223344', amount: 52000 },
  { reference: 'payroll:2026-11:emp-2', accountNumber: '0099887766', amount: '61500.50' },
];

describe('bank simulator', () => {
  it('credits registered transfers immediately by default', async () => {
    const b = await bank();
    const before = new Date(Date.now() - 1).toISOString();
    const reg = await api(b, '/v1/transfers', { method: 'POST', body: JSON.stringify({ transfers }) });
    expect(reg.status).toBe(201);
    const r = (await reg.json()) as { transfers: Array<{ reference: string; status: string; duplicate: boolean }> };
    expect(r.transfers.map((t) => [t.reference, t.status, t.duplicate])).toEqual([
      ['payroll:2026-11:emp-1', 'credited', false],
      ['payroll:2026-11:emp-2', 'credited', false],
    ]);
    const res = await api(b, `/v1/credits?since=${encodeURIComponent(before)}`);
    const body = (await res.json()) as { credits: Array<{ reference: string; accountNumber: string; amount: unknown; creditedAt: string }>; asOf: string };
    expect(body.credits.map((c) => [c.reference, c.accountNumber, c.amount])).toEqual([
      ['payroll:2026-11:emp-1', '0011223344', 52000],
      ['payroll:2026-11:emp-2', '0099887766', '61500.50'],
    ]);
    expect(Date.parse(body.credits[0]?.creditedAt ?? '')).toBeGreaterThan(0);

    // polling from asOf: nothing new (inclusive since may repeat same-instant credits; dedupe by reference)
    const later = (await (await api(b, `/v1/credits?since=${encodeURIComponent(new Date(Date.parse(body.asOf) + 1).toISOString())}`)).json()) as {
      credits: unknown[];
    };
    expect(later.credits).toEqual([]);
  });

  it('credits after the configured delay, or at once with creditAll()', async () => {
    const b = await bank({ creditDelayMs: 150 });
    b.register([transfers[0]!]);
    expect(b.credits()).toEqual([]);
    const first = (await (await api(b, '/v1/credits')).json()) as { credits: unknown[]; asOf: string };
    expect(first.credits).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    const second = (await (await api(b, `/v1/credits?since=${encodeURIComponent(first.asOf)}`)).json()) as { credits: Array<{ reference: string }> };
    expect(second.credits.map((c) => c.reference)).toEqual(['payroll:2026-11:emp-1']);

    const slow = await bank({ creditDelayMs: 60_000 });
    slow.register(transfers);
    expect(slow.transfers().map((t) => t.status)).toEqual(['pending', 'pending']);
    expect(slow.creditAll()).toBe(2);
    expect(slow.credits()).toHaveLength(2);
    expect((await (await api(slow, '/v1/transfers/payroll%3A2026-11%3Aemp-2')).json()) as { status: string }).toMatchObject({ status: 'credited' });
  });

  it("credits chosen transfers at once (the tests' way to make a poll find changes) and spreads credits over time", async () => {
    const b = await bank({ creditDelayMs: 60_000 });
    b.register(transfers);
    expect(b.credit(['payroll:2026-11:emp-2', 'unknown'])).toBe(1);
    expect(b.credits().map((c) => c.reference)).toEqual(['payroll:2026-11:emp-2']);
    const res = await fetch(`${b.url}/_admin/credit`, {
      method: 'POST',
      body: JSON.stringify({ references: ['payroll:2026-11:emp-1', 'payroll:2026-11:emp-2'] }),
    });
    expect(await res.json()).toEqual({ credited: 1 });
    expect(
      b
        .credits()
        .map((c) => c.reference)
        .sort(),
    ).toEqual(['payroll:2026-11:emp-1', 'payroll:2026-11:emp-2']);

    const spread = await bank({ creditDelayMs: 1_000, creditSpreadMs: 60_000 });
    const many = Array.from({ length: 50 }, (_, i) => ({ reference: `payroll:2026-11:emp-${i + 1}`, accountNumber: '0011223344', amount: 100 }));
    const before = Date.now();
    spread.register(many);
    const due = spread.transfers().map((t) => t.dueAt.getTime() - t.registeredAt.getTime());
    expect(Math.min(...due)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...due)).toBeLessThan(61_000);
    expect(new Set(due).size).toBeGreaterThan(10);
    expect(spread.transfers().every((t) => t.status === 'pending' && t.registeredAt.getTime() >= before)).toBe(true);
  });

  it('is idempotent per reference and refuses conflicting data', async () => {
    const b = await bank();
    await api(b, '/v1/transfers', { method: 'POST', body: JSON.stringify(transfers) });
    const again = (await (await api(b, '/v1/transfers', { method: 'POST', body: JSON.stringify(transfers) })).json()) as {
      transfers: Array<{ duplicate: boolean }>;
    };
    expect(again.transfers.every((t) => t.duplicate)).toBe(true);
    expect(b.transfers()).toHaveLength(2);
    const conflict = await api(b, '/v1/transfers', { method: 'POST', body: JSON.stringify([{ ...transfers[0], amount: 1 }]) });
    expect(conflict.status).toBe(409);
    const invalid = await api(b, '/v1/transfers', { method: 'POST', body: JSON.stringify([{ reference: 'x', amount: -5 }]) });
    expect(invalid.status).toBe(400);
  });

  it("lists credits in pages: 1,000 by default, at most 10,000; the cursor goes on from where the page ended, up to the first page's asOf", async () => {
    const b = await bank();
    const many = Array.from({ length: 2_345 }, (_, i) => ({ reference: `payroll:2026-11:emp-${i + 1}`, accountNumber: '0011223344', amount: 1000 + i }));
    b.register(many);
    type Page = { credits: Array<{ reference: string }>; asOf: string; hasMore: boolean; nextCursor: string | null };
    const page = async (query: string) => {
      const res = await api(b, `/v1/credits?${query}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Page;
    };
    const first = await page('');
    expect(first.credits).toHaveLength(1_000);
    expect(first.hasMore).toBe(true);
    // Credited after the listing began: not in this listing (its asOf), in the next poll's.
    await new Promise((r) => setTimeout(r, 5));
    b.register([{ reference: 'payroll:2026-11:late', accountNumber: '0011223344', amount: 1 }]);
    const seen = [...first.credits];
    let cursor = first.nextCursor;
    let pages = 1;
    while (cursor) {
      const next = await page(`cursor=${encodeURIComponent(cursor)}&limit=700`);
      expect(next.asOf).toBe(first.asOf);
      expect(next.credits.length).toBeLessThanOrEqual(700);
      seen.push(...next.credits);
      cursor = next.hasMore ? next.nextCursor : null;
      if (!next.hasMore) expect(next.nextCursor).toBeNull();
      pages++;
    }
    expect(pages).toBe(3); // 1,000 + 700 + 645
    expect(seen.map((c) => c.reference)).toEqual(many.map((t) => t.reference));
    const nextPoll = await page(`since=${encodeURIComponent(first.asOf)}&limit=10000`);
    expect(nextPoll.credits.map((c) => c.reference)).toContain('payroll:2026-11:late');
    expect(nextPoll.hasMore).toBe(false);

    for (const bad of [
      'limit=0',
      'limit=10001',
      'limit=ten',
      'cursor=nonsense',
      `cursor=${encodeURIComponent(first.nextCursor!)}&since=${encodeURIComponent(first.asOf)}`,
    ]) {
      expect((await api(b, `/v1/credits?${bad}`)).status, bad).toBe(400);
    }
    // A cursor from before a reset names a listing the bank no longer has.
    b.reset();
    expect((await api(b, `/v1/credits?cursor=${encodeURIComponent(first.nextCursor!)}`)).status).toBe(400);
  });

  it('needs the bearer key, fails during an outage, resets', async () => {
    const b = await bank();
    expect((await fetch(`${b.url}/v1/credits`)).status).toBe(401);
    expect((await fetch(`${b.url}/v1/credits`, { headers: { Authorization: 'Bearer nope' } })).status).toBe(401);
    expect((await api(b, '/v1/credits?since=yesterday')).status).toBe(400);
    b.unavailableFor(100);
    expect((await api(b, '/v1/credits')).status).toBe(503);
    await new Promise((r) => setTimeout(r, 120));
    expect((await api(b, '/v1/credits')).status).toBe(200);
    b.register(transfers);
    expect((await fetch(`${b.url}/_admin/reset`, { method: 'POST' })).status).toBe(200);
    expect(b.transfers()).toEqual([]);
  });
});

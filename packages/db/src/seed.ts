import { randomUUID } from 'node:crypto';
import { generatePassword, hashPassword } from './password.ts';
import type { Pool } from './pool.ts';
import { COMPANY_KINDS, COMPANY_WORDS, FAMILY_NAMES, GIVEN_NAMES } from './names.ts';
import { pick, prng } from './random.ts';
import { countCompanies } from './sql/companies.ts';
import { inTransaction } from './transaction.ts';

export interface SeedOptions {
  /** Employees over all companies. Default: 50,000. */
  employees?: number;
  /** Companies. Default: 60. */
  companies?: number;
  /** Share of employees given an invalid email address. Default: 0.005 (0.5 %). */
  invalidRate?: number;
  /** Same seed → same companies and employees (never the same passwords). Default: 20261101. */
  seed?: number;
  /** Wipe existing companies, employees, users and jobs first. Default: false. */
  reset?: boolean;
}

export interface SeedLogin {
  role: 'ADMIN' | 'HR';
  email: string;
  password: string;
  company?: string;
}

export interface SeedResult {
  companies: number;
  employees: number;
  invalidEmails: number;
  logins: SeedLogin[];
  ms: number;
}

export class AlreadySeededError extends Error {
  override readonly name = 'AlreadySeededError';
  constructor(count: number) {
    super(`The database already holds ${count} companies; pass --reset to wipe and seed again.`);
  }
}

/** Uneven company sizes (a few large, many small) that sum exactly to `total`. */
export function companySizes(total: number, companies: number, rand: () => number): number[] {
  const weights = Array.from({ length: companies }, (_, i) => (0.6 + rand()) / Math.pow(i + 1, 0.8));
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(total >= companies ? 1 : 0, Math.floor((w / sum) * total)));
  let rest = total - sizes.reduce((a, b) => a + b, 0);
  for (let i = 0; rest !== 0; i = (i + 1) % companies) {
    const step = rest > 0 ? 1 : -1;
    if (step < 0 && (sizes[i] ?? 0) <= 1) continue;
    sizes[i] = (sizes[i] ?? 0) + step;
    rest -= step;
  }
  return sizes;
}

/**
 * Deterministic demo data in bulk: 50,000 employees take a few seconds. The same seed gives the
 * same companies and employees; the logins' passwords never come from it (a cryptographic
 * source, different on every run), so nobody can compute them from the source code.
 */
export async function seedDatabase(pool: Pool, options: SeedOptions = {}): Promise<SeedResult> {
  const { employees = 50_000, companies = 60, invalidRate = 0.005, seed = 20261101, reset = false } = options;
  if (!Number.isInteger(employees) || employees < 0) throw new Error(`employees must be a whole number >= 0, got ${employees}`);
  if (!Number.isInteger(companies) || companies < 1) throw new Error(`companies must be a whole number >= 1, got ${companies}`);
  if (!(invalidRate >= 0 && invalidRate <= 1)) throw new Error(`invalidRate must be between 0 and 1, got ${invalidRate}`);
  const started = performance.now();
  const rand = prng(seed);
  const ids = prng(seed ^ 0x5eed);
  const uuid = () => {
    // Deterministic UUIDv4-shaped ids, so the same seed yields the same rows.
    const hex = Array.from({ length: 32 }, () => Math.floor(ids() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };

  return inTransaction(pool, undefined, async (client) => {
    const existing = await countCompanies(client);
    if (existing > 0 && !reset) throw new AlreadySeededError(existing);
    if (reset) await client.query('truncate companies, users, audit_log, email_deliveries, schedule_runs, locks, jobs, job_attempts, bank_polls cascade');

    const sizes = companySizes(employees, companies, rand);
    const companyRows = sizes.map((size, i) => {
      const name = `${pick(rand, COMPANY_WORDS)} ${pick(rand, COMPANY_KINDS)} ${i + 1}`;
      return { id: uuid(), name, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), size };
    });
    await client.query(`insert into companies (id, name) select * from unnest($1::uuid[], $2::text[])`, [
      companyRows.map((c) => c.id),
      companyRows.map((c) => c.name),
    ]);

    const cols = {
      company: [] as string[],
      code: [] as string[],
      latin: [] as string[],
      bengali: [] as string[],
      email: [] as string[],
      salary: [] as string[],
      bank: [] as string[],
    };
    let invalid = 0;
    let n = 0;
    for (const company of companyRows) {
      for (let k = 0; k < company.size; k++) {
        n++;
        const [gl, gb] = pick(rand, GIVEN_NAMES);
        const [fl, fb] = pick(rand, FAMILY_NAMES);
        const code = `E${String(k + 1).padStart(5, '0')}`;
        const local = `${gl}.${fl}.${k + 1}`.toLowerCase();
        const bad = rand() < invalidRate;
        if (bad) invalid++;
        // Invalid addresses are the kind HR really types: a missing '@' or a doubled dot.
        const email = bad ? (n % 2 ? `${local}.${company.slug}.example.com` : `${local}@${company.slug}..example.com`) : `${local}@${company.slug}.example.com`;
        const basic = 15_000 + Math.floor(rand() * 120) * 500;
        const salary = {
          basic,
          houseRent: Math.round(basic * 0.5),
          medical: 1_500,
          conveyance: 1_000,
          tax: Math.round(basic * 0.05),
          providentFund: Math.round(basic * 0.1),
        };
        cols.company.push(company.id);
        cols.code.push(code);
        cols.latin.push(`${gl} ${fl}`);
        cols.bengali.push(`${gb} ${fb}`);
        cols.email.push(email);
        cols.salary.push(JSON.stringify(salary));
        cols.bank.push(`${String(100 + (n % 900)).padStart(3, '0')}-${String(Math.floor(rand() * 1e10)).padStart(10, '0')}`);
      }
    }
    const CHUNK = 10_000;
    for (let i = 0; i < cols.code.length; i += CHUNK) {
      const s = (a: string[]) => a.slice(i, i + CHUNK);
      await client.query(
        `insert into employees (company_id, code, name_latin, name_bengali, email, salary, bank_account)
         select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::text[])`,
        [s(cols.company), s(cols.code), s(cols.latin), s(cols.bengali), s(cols.email), s(cols.salary), s(cols.bank)],
      );
    }

    const logins: SeedLogin[] = [{ role: 'ADMIN', email: 'admin@beton.example', password: generatePassword() }];
    for (const company of companyRows) {
      logins.push({ role: 'HR', email: `hr@${company.slug}.example.com`, password: generatePassword(), company: company.name });
    }
    const hashes = await Promise.all(logins.map((l) => hashPassword(l.password)));
    const companyByName = new Map(companyRows.map((c) => [c.name, c.id]));
    const userIds = logins.map(() => randomUUID());
    await client.query(
      `insert into users (id, email, name, role, company_id)
       select * from unnest($1::uuid[], $2::text[], $3::text[], $4::"Role"[], $5::uuid[])`,
      [
        userIds,
        logins.map((l) => l.email),
        logins.map((l) => (l.role === 'ADMIN' ? 'Platform admin' : `HR, ${l.company}`)),
        logins.map((l) => l.role),
        logins.map((l) => (l.company ? companyByName.get(l.company) : null)),
      ],
    );
    // Better Auth's email + password sign-in reads the hash from the user's credential account.
    await client.query(
      `insert into accounts (user_id, account_id, provider_id, password)
       select u, u::text, 'credential', h from unnest($1::uuid[], $2::text[]) as t(u, h)`,
      [userIds, hashes],
    );
    return { companies: companyRows.length, employees: n, invalidEmails: invalid, logins, ms: Math.round(performance.now() - started) };
  });
}

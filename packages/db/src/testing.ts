import { randomBytes } from 'node:crypto';
import { createDatabaseIfMissing, dropDatabase } from './bootstrap.ts';
import { createPool, type Pool } from './pool.ts';
import { withDatabase } from './url.ts';

/**
 * Test databases: the suite's global setup migrates one template database; each test
 * file copies it (CREATE DATABASE … TEMPLATE, ~50 ms) and drops its copy afterwards.
 */
export interface TestDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

export function testServerUrl(): string {
  const url = process.env.BETON_TEST_SERVER_URL;
  if (!url) throw new Error('BETON_TEST_SERVER_URL is not set: run the tests with `npm test` (its global setup starts PostgreSQL).');
  return url;
}

export async function createTestDatabase(name = 'test'): Promise<TestDatabase> {
  const server = testServerUrl();
  const template = process.env.BETON_TEST_TEMPLATE ?? 'beton_template';
  const database = `beton_${name
    .replace(/[^a-z0-9_]/gi, '_')
    .toLowerCase()
    .slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  await createDatabaseIfMissing(server, database, template);
  const url = withDatabase(server, database);
  const pool = createPool({ url, max: 10, applicationName: 'beton-test' });
  return {
    url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      await dropDatabase(server, database);
    },
  };
}

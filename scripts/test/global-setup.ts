import { freePort, createDatabaseIfMissing, dropDatabase, migrateDatabase, startEmbeddedPostgres, withDatabase, createPool } from '@beton/db';
import { migrateQueue } from '@beton/jobs';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureNodeBuild } from '../lib/processes.ts';
import { chromiumExecutable } from './chromium.ts';

/**
 * Starts the suite's PostgreSQL (embedded unless DATABASE_URL is set), migrates a template
 * database once, and tells the test files where they are. Everything is stopped at the end.
 */
export default async function setup(_project: TestProject) {
  // The Node programs the tests start as production does (node bin/beton.mjs …), built once
  // here (esbuild, under a second) before the test files run in parallel; BETON_BUILT=1 tells
  // the files not to build again.
  ensureNodeBuild();
  let stopServer = async () => {};
  let serverUrl: string;
  if (process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL;
  } else {
    // A folder and a port of its own, so two test runs on one machine never collide.
    const dir = path.resolve(`.beton/test-postgres-${process.pid}`);
    const server = await startEmbeddedPostgres({ dir, persistent: false, fast: true, port: await freePort() });
    serverUrl = `${server.serverUrl}/postgres`;
    stopServer = async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const template = `beton_template_${process.pid}`;
  try {
    await dropDatabase(serverUrl, template);
    await createDatabaseIfMissing(serverUrl, template);
    const templateUrl = withDatabase(serverUrl, template);
    await migrateDatabase(templateUrl);
    const pool = createPool({ url: templateUrl, max: 1 });
    await migrateQueue(pool);
    await pool.end();
  } catch (error) {
    await stopServer();
    throw error;
  }
  // The browser tests' Chromium (from npm) is unpacked once here, before test files run in parallel.
  process.env.CHROMIUM_PATH = await chromiumExecutable();
  process.env.BETON_TEST_SERVER_URL = serverUrl;
  process.env.BETON_TEST_TEMPLATE = template;
  return async () => {
    await dropDatabase(serverUrl, template).catch(() => {});
    await stopServer();
  };
}

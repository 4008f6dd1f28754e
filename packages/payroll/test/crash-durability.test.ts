/**
 * A database server crash under the slip email's path. The pipeline's bookkeeping commits
 * asynchronously (@beton/db ASYNC_COMMIT: the delivery row, the concurrency slot, the place under
 * the rate limit); the unknown mark right before the request leaves is a synchronous commit, and
 * PostgreSQL flushes its WAL in order, so the mark makes all of it durable before anything is sent.
 *
 * On a cluster of its own with production settings (fsync on; the suite's shared server runs with
 * fsync off) whose WAL writer is held still, so an asynchronous commit stays in the server's
 * memory; crashed by an immediate shutdown (SIGQUIT: no checkpoint, nothing flushed) and started
 * again, replaying the WAL on disk.
 */
import { migrateQueue } from '@beton/jobs';
import { createPool, freePort, migrateDatabase, startEmbeddedPostgres, withDatabase, type EmbeddedDatabase, type Pool } from '@beton/db';
import { PostgresLimiterStore, ratePlaces } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverEmail } from '../src/email.ts';
import { createMailer, type Mailer } from '../src/mailer.ts';

describe('a database server crash: what the slip email path committed asynchronously and what the unknown mark made durable', () => {
  let server: EmbeddedDatabase;
  let url: string;
  let pool: Pool;
  let provider: ProviderSimulator;
  let mailer: Mailer;
  const places = ratePlaces(40, 100, 'fixed');

  beforeAll(async () => {
    server = await startEmbeddedPostgres({
      dir: path.resolve(`.beton/crash-postgres-${process.pid}`),
      persistent: false,
      port: await freePort(),
      // Nothing else flushes WAL during a test (the WAL writer is held: holdWalWriter): the
      // background writer writes no pages (writing one flushes the WAL before it), no
      // checkpoint, no autovacuum.
      settings: { bgwriter_lru_maxpages: '0', checkpoint_timeout: '1h', autovacuum: 'off' },
    });
    const admin = createPool({ url: `${server.serverUrl}/postgres`, max: 1 });
    await admin.query('create database beton_crash');
    await admin.end();
    url = withDatabase(`${server.serverUrl}/postgres`, 'beton_crash');
    await migrateDatabase(url);
    pool = createPool({ url, max: 4 });
    await migrateQueue(pool); // the job engine's own schema (its rate function), as `beton migrate` does
    provider = await startProviderSimulator({ latencyMs: 5, latencySpreadMs: 0, ratePerSecond: 1000 });
    mailer = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url });
  }, 120_000);
  afterAll(async () => {
    // A test that failed while the WAL writer was held: let it go, or the server's stop would wait for it.
    if (heldWalWriter !== undefined) process.kill(heldWalWriter, 'SIGCONT');
    await pool?.end().catch(() => {});
    await provider?.close();
    await server?.stop();
  });

  /**
   * The server's WAL writer stopped (SIGSTOP) from here until the crash, which it does not outlive:
   * nothing flushes the WAL in the background meanwhile (its rounds, or a completed WAL page, wake
   * it to flush what asynchronous commits left), so what is durable at the crash is what a
   * synchronous commit flushed.
   */
  let heldWalWriter: number | undefined;
  async function holdWalWriter(): Promise<void> {
    const { rows } = await pool.query<{ pid: number }>(`select pid from pg_stat_activity where backend_type = 'walwriter'`);
    heldWalWriter = rows[0]!.pid;
    process.kill(heldWalWriter, 'SIGSTOP');
  }
  async function crash(): Promise<void> {
    if (heldWalWriter !== undefined) process.kill(heldWalWriter, 'SIGKILL');
    heldWalWriter = undefined;
    await server.crash();
  }

  /** What the restarted server has, read on a connection of its own. */
  async function afterRestart<T>(read: (db: Pool) => Promise<T>): Promise<T> {
    const db = createPool({ url, max: 1 });
    try {
      return await read(db);
    } finally {
      await db.end();
    }
  }
  const placeTaken = (db: Pool, key: string) => db.query(`select 1 from rate_limits where key = $1`, [key]).then((r) => r.rowCount === 1);

  it('a place under the rate limit, committed asynchronously with nothing durable after it, is lost in a crash (the crash loses what was not flushed)', async () => {
    const limiter = new PostgresLimiterStore(pool);
    await holdWalWriter();
    await limiter.reserveStart('crash:alone', places);
    expect(await placeTaken(pool, 'crash:alone')).toBe(true);
    await crash();
    expect(await afterRestart((db) => placeTaken(db, 'crash:alone'))).toBe(false);
  });

  it('a crash right before the request leaves keeps the unknown mark and, made durable by it, the delivery row and the place committed asynchronously before it; the request then leaves once', async () => {
    const limiter = new PostgresLimiterStore(pool);
    const key = 'slip:2026-11:crash-1';
    let seen: { place: boolean; delivery: { status: string; unknown: boolean } | undefined } | undefined;
    await holdWalWriter();
    const result = await deliverEmail(
      { pool, mailer },
      { to: 'rahim@acme.example', subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: key },
      {
        beforeSend: async () => void (await limiter.reserveStart('crash:email', places)),
        // After the mark, right before the request leaves: the server crashes here.
        announced: async () => {
          await crash();
          seen = await afterRestart(async (db) => ({
            place: await placeTaken(db, 'crash:email'),
            delivery: (
              await db.query<{ status: string; unknown: boolean }>(
                `select status, outcome_unknown_since is not null as unknown from email_deliveries where idempotency_key = $1`,
                [key],
              )
            ).rows[0],
          }));
        },
      },
    );
    expect(seen).toEqual({ place: true, delivery: { status: 'sending', unknown: true } });
    expect(result).toMatchObject({ sent: true, alreadySent: false });
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(1);
  });

  it('an attempt whose delivery row was lost under it sends nothing: the mark finds no row (delivery_record_missing)', async () => {
    const key = 'slip:2026-11:crash-2';
    await holdWalWriter();
    const error = await deliverEmail(
      { pool, mailer },
      { to: 'rahim@acme.example', subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: key },
      // The row committed asynchronously, then the crash before the mark: the row is gone.
      { beforeSend: crash },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'transient', code: 'delivery_record_missing' });
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(0);
    expect(await afterRestart((db) => db.query(`select 1 from email_deliveries where idempotency_key = $1`, [key]).then((r) => r.rowCount))).toBe(0);
  });
});

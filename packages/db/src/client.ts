import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from './pool.ts';
import { PrismaClient } from './generated/prisma/client.ts';

export { Prisma, PrismaClient } from './generated/prisma/client.ts';
export type * from './generated/prisma/models.ts';
export * from './generated/prisma/enums.ts';

/**
 * A Prisma client over an EXISTING pg pool (the process's one pool: the connection budget is
 * fixed, so Prisma never opens its own). The adapter borrows a connection per query like
 * `pool.query` does and never ends the pool (`disposeExternalPool` is false by default): the
 * pool's owner ends it. Type parsing is the adapter's own per query (bigint ids come back as
 * `bigint`), the pool's global parsers are untouched. Constructing never connects.
 */
export function createPrisma(pool: Pool): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool) });
}

const clients = new WeakMap<Pool, PrismaClient>();

/** The Prisma client of this pool, made once per pool: services take the pool and ask it here. */
export function prismaFor(pool: Pool): PrismaClient {
  let client = clients.get(pool);
  if (!client) {
    client = createPrisma(pool);
    clients.set(pool, client);
  }
  return client;
}

import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.ts';

export { Prisma, PrismaClient } from './generated/prisma/client.ts';
export type * from './generated/prisma/models.ts';
export * from './generated/prisma/enums.ts';

export interface PrismaOptions {
  url: string;
  /** Maximum connections of this client's pool. Default: 5. */
  max?: number;
}

/** A Prisma client on its own pg pool (driver adapter). Importing types never connects. */
export function createPrisma({ url, max = 5 }: PrismaOptions): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max }) });
}

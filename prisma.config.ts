import { defineConfig } from 'prisma/config';
import { prismaEngineEnv } from './tooling/prisma-engine/config.ts';

// Prisma's CLI downloads a native schema engine that cannot be fetched here; we point it
// at a stand-in that runs the WebAssembly engine shipped inside the `prisma` package.
// See tooling/prisma-engine/README.md.
Object.assign(process.env, prismaEngineEnv());

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/beton_dev' },
});

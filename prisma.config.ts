import { defineConfig } from 'prisma/config';
import { prismaEngineEnv } from './tooling/prisma-engine/config.ts';

// Which schema engine Prisma's CLI runs (BETON_SCHEMA_ENGINE: auto | native | wasm): Prisma's
// own native engine in production and the image; the WebAssembly stand-in only where the
// native binary cannot be fetched (this machine, CI). See tooling/prisma-engine/README.md.
Object.assign(process.env, prismaEngineEnv());

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/beton_dev' },
});

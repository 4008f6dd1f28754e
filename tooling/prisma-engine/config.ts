import { fileURLToPath } from 'node:url';

/** Absolute path of the schema-engine stand-in (see README.md in this folder). */
export const schemaEngineStandIn = fileURLToPath(new URL('./schema-engine', import.meta.url));

/**
 * Environment for Prisma's CLI: point it at the stand-in so it never tries to download the
 * native schema-engine binary.
 */
export function prismaEngineEnv(): Record<string, string> {
  return { PRISMA_SCHEMA_ENGINE_BINARY: schemaEngineStandIn };
}

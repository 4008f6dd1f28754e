import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the schema-engine stand-in (see README.md in this folder). */
export const schemaEngineStandIn = fileURLToPath(new URL('./schema-engine', import.meta.url));

/**
 * Which schema engine Prisma's CLI (migrations, `db`, `generate`) runs, from
 * `BETON_SCHEMA_ENGINE`:
 * - `native`: Prisma's own binary (`node_modules/@prisma/engines/schema-engine-<platform>`,
 *   fetched by Prisma on first use). What production and the image run.
 * - `wasm`: the stand-in in this folder (Prisma's WebAssembly engine behind the native
 *   engine's protocol), for machines that cannot fetch the binary (this one, CI).
 * - `auto` (default): the native engine when its binary is installed or NODE_ENV=production,
 *   else the stand-in.
 */
export const SCHEMA_ENGINES = ['auto', 'native', 'wasm'] as const;
export type SchemaEngineSetting = (typeof SCHEMA_ENGINES)[number];

/** Prisma's native schema-engine binaries installed next to @prisma/engines (none on an offline machine). */
export function nativeSchemaEngines(): string[] {
  let dir: string;
  try {
    dir = path.dirname(createRequire(import.meta.url).resolve('@prisma/engines/package.json'));
  } catch {
    return [];
  }
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^schema-engine-[a-z0-9.-]+$/.test(f) && !/\.(gz|sha256|tmp)$/.test(f))
    .map((f) => path.join(dir, f));
}

export interface SchemaEngineChoice {
  engine: 'native' | 'wasm';
  /** Why, in a few words (printed when the stand-in is chosen without being asked for). */
  reason: string;
  /** Environment for Prisma's CLI: PRISMA_SCHEMA_ENGINE_BINARY for the stand-in, nothing for native. */
  env: Record<string, string>;
}

export class SchemaEngineSettingError extends Error {
  override readonly name = 'SchemaEngineSettingError';
}

export function chooseSchemaEngine(env: NodeJS.ProcessEnv = process.env, installed: () => string[] = nativeSchemaEngines): SchemaEngineChoice {
  const setting = (env.BETON_SCHEMA_ENGINE || 'auto') as SchemaEngineSetting;
  if (!SCHEMA_ENGINES.includes(setting)) {
    throw new SchemaEngineSettingError(`BETON_SCHEMA_ENGINE must be one of ${SCHEMA_ENGINES.join(', ')} (got "${env.BETON_SCHEMA_ENGINE}")`);
  }
  if (env.PRISMA_SCHEMA_ENGINE_BINARY) {
    const standIn = path.resolve(env.PRISMA_SCHEMA_ENGINE_BINARY) === schemaEngineStandIn;
    return { engine: standIn ? 'wasm' : 'native', reason: 'PRISMA_SCHEMA_ENGINE_BINARY is set', env: {} };
  }
  const standIn = { PRISMA_SCHEMA_ENGINE_BINARY: schemaEngineStandIn };
  if (setting === 'wasm') return { engine: 'wasm', reason: 'BETON_SCHEMA_ENGINE=wasm', env: standIn };
  if (setting === 'native') return { engine: 'native', reason: 'BETON_SCHEMA_ENGINE=native', env: {} };
  if (installed().length > 0) return { engine: 'native', reason: 'the native engine is installed', env: {} };
  if (env.NODE_ENV === 'production') return { engine: 'native', reason: 'NODE_ENV=production', env: {} };
  return { engine: 'wasm', reason: 'no native schema engine in node_modules/@prisma/engines', env: standIn };
}

/**
 * Environment for Prisma's CLI (copied into process.env by /prisma.config.ts, which the CLI
 * loads before it looks for an engine). Says so on stderr when it falls back to the stand-in.
 */
export function prismaEngineEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const choice = chooseSchemaEngine(env);
  if (choice.engine === 'wasm' && choice.reason !== 'BETON_SCHEMA_ENGINE=wasm') {
    process.stderr.write(`prisma: schema engine = WebAssembly stand-in (tooling/prisma-engine): ${choice.reason}\n`);
  }
  return choice.env;
}

/**
 * The web app's server import graph: every module apps/web/src reaches (through the workspace
 * packages, as Next bundles them) is followed with esbuild, and the npm packages it would load
 * are listed. The job engine's worker runtime — graphile-worker, the render threads' piscina,
 * the Redis client — must not be among them: the web imports `@beton/jobs/client` only.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';

const webDir = path.resolve(import.meta.dirname, '..');
const WORKER_ONLY = ['graphile-worker', 'piscina', 'ioredis'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.(ts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** npm packages stay external (and are recorded); our own files and workspace packages are followed. */
function packagesOf(found: Set<string>): Plugin {
  return {
    name: 'record-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./~]/ }, (args) => {
        if (args.path.startsWith('@beton/') || args.path.startsWith('node:')) return undefined;
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0]!;
        found.add(name);
        return { path: args.path, external: true };
      });
    },
  };
}

describe('web server import graph', () => {
  it('does not reach graphile-worker, piscina or ioredis (and does reach pg, zod, the engine client)', { timeout: 120_000 }, async () => {
    const found = new Set<string>();
    const result = await build({
      entryPoints: sources(path.join(webDir, 'src')),
      bundle: true,
      write: false,
      outdir: path.join(webDir, '.import-graph'),
      platform: 'node',
      format: 'esm',
      jsx: 'automatic',
      tsconfig: path.join(webDir, 'tsconfig.json'),
      loader: { '.css': 'empty' },
      metafile: true,
      logLevel: 'silent',
      plugins: [packagesOf(found)],
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((p) => p.includes('packages/jobs/src/client.ts'))).toBe(true);
    expect(inputs.filter((p) => p.includes('packages/jobs/src/engine/worker.ts') || p.includes('packages/jobs/src/migrate.ts'))).toEqual([]);
    expect([...found].filter((p) => WORKER_ONLY.includes(p))).toEqual([]);
    expect([...found]).toEqual(expect.arrayContaining(['pg', 'zod', 'next']));
  });
});

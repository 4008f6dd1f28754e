#!/usr/bin/env node
/**
 * Builds the Node programs Beton runs in production to plain JavaScript in `dist/` (esbuild):
 * the worker process, its render thread, the operators' CLI, the `npm start` launcher and the
 * two simulators. Beton's own workspace packages (`@beton/*`, TypeScript sources) are bundled
 * in; every other package stays an import of node_modules, so production installs only the
 * runtime dependencies. `dist/manifest.json` is written last and names every file with its
 * size and SHA-256: `bin/beton.mjs` refuses to start a build it does not match (an
 * interrupted or corrupted build), and says to run the build.
 *
 * Run by `npm run build` (turbo task `//#build:node`, cached on its inputs), by the test
 * suite's global setup and by the launchers of the drill and the benches.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Output name (without .js) → TypeScript entry. The names are what `bin/beton.mjs` starts. */
export const ENTRIES = {
  worker: 'apps/worker/src/main.ts',
  'render-thread': 'apps/worker/src/render-thread.ts',
  cli: 'apps/worker/src/cli.ts',
  start: 'scripts/start.ts',
  'provider-simulator': 'packages/simulators/src/provider-main.ts',
  'bank-simulator': 'packages/simulators/src/bank-main.ts',
  // Loaded by bin/beton.mjs before the worker: starts OpenTelemetry when OTEL_* ask for it.
  tracing: 'packages/telemetry/src/register.ts',
};

/** Everything but Beton's own packages and relative imports stays an import of node_modules. */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@beton/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

export async function buildNode({ outdir = path.join(root, 'dist'), quiet = false } = {}) {
  const started = performance.now();
  // Built beside the target and swapped in whole, so a running process never sees half a build.
  const tmp = `${outdir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const result = await build({
      metafile: true,
      absWorkingDir: root,
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(root, file)])),
      outdir: tmp,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      sourcemap: 'linked',
      logLevel: quiet ? 'error' : 'warning',
      plugins: [externalPackages],
      // The generated Prisma client is never part of a Node program (the web app uses it).
      legalComments: 'none',
    });
    // Every import left to node_modules must resolve as Node's ESM loader resolves it (no
    // extension guessing, `exports` maps honoured): found here, not when a worker starts.
    const unresolved = [];
    for (const [file, output] of Object.entries(result.metafile.outputs)) {
      for (const imp of output.imports) {
        if (!imp.external || imp.path.startsWith('node:')) continue;
        try {
          const resolved = import.meta.resolve(imp.path, pathToFileURL(path.join(root, file)).href);
          // A subpath of a package without an `exports` map resolves without being looked up.
          if (resolved.startsWith('file:') && !existsSync(fileURLToPath(resolved))) throw new Error(`no file ${fileURLToPath(resolved)}`);
        } catch (error) {
          unresolved.push(`${imp.path} (from ${path.basename(file)}): ${error.code ?? error.message}`);
        }
      }
    }
    if (unresolved.length) throw new Error(`imports Node cannot resolve:\n  ${[...new Set(unresolved)].join('\n  ')}`);
    const files = {};
    for (const name of Object.keys(ENTRIES)) {
      for (const file of [`${name}.js`, `${name}.js.map`]) {
        const bytes = readFileSync(path.join(tmp, file));
        files[file] = { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
      }
    }
    writeFileSync(path.join(tmp, 'manifest.json'), `${JSON.stringify({ builtAt: new Date().toISOString(), entries: ENTRIES, files }, null, 2)}\n`);
    rmSync(outdir, { recursive: true, force: true });
    renameSync(tmp, outdir);
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  const ms = Math.round(performance.now() - started);
  if (!quiet) {
    const total = Object.keys(ENTRIES).reduce((sum, name) => sum + statSync(path.join(outdir, `${name}.js`)).size, 0);
    process.stdout.write(
      `built ${Object.keys(ENTRIES).length} Node programs into ${path.relative(process.cwd(), outdir) || '.'} (${(total / 1e6).toFixed(1)} MB) in ${ms} ms\n`,
    );
  }
  return { ms };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildNode({ quiet: process.argv.includes('--quiet') }).catch((error) => {
    process.stderr.write(`build failed: ${error?.message ?? error}\n`);
    process.exit(1);
  });
}

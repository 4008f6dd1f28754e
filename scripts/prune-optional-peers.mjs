#!/usr/bin/env node
/**
 * After `npm ci --omit=dev` (the image's runtime dependencies): removes the packages npm keeps
 * only because a production package names them as an optional peer while the project has them
 * as devDependencies — marked `devOptional` in package-lock.json (better-auth names vitest, vite
 * names tsx, …) — and then the optional packages (platform binaries) that nothing left depends
 * on (@esbuild/linux-x64 once esbuild is gone). No production code needs an optional peer, and
 * the image must not carry a test runner or a TypeScript runner. The root's own optional
 * dependencies are the Node that npm scripts run on in development (node-<platform>-<arch>):
 * the image runs its base image's Node, so they go too. Prints what it removed.
 *
 *   node scripts/prune-optional-peers.mjs [folder with package-lock.json and node_modules]
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const nameOf = (location) => location.replace(/^.*node_modules\//, '');

/**
 * Of the lock file's packages that `npm ci --omit=dev` installs (and `installed` confirms:
 * another platform's binaries are skipped), which stay in the image and which are pruned.
 */
export function runtimePackages(lock, installed = () => true) {
  const keep = new Map(Object.entries(lock.packages).filter(([location, entry]) => location.startsWith('node_modules/') && !entry.dev && installed(location)));
  const pruned = [];
  for (const [location, entry] of [...keep]) {
    if (entry.devOptional) {
      keep.delete(location);
      pruned.push(location);
    }
  }
  // The root's optionalDependencies (the development Node) are wanted by nothing at run time.
  const workspaces = Object.entries(lock.packages)
    .filter(([location]) => !location.startsWith('node_modules/'))
    .map(([location, e]) => (location === '' ? { ...e, optionalDependencies: {} } : e));
  for (let changed = true; changed;) {
    changed = false;
    const wanted = new Set(
      [...keep.values(), ...workspaces].flatMap((e) => [...Object.keys(e.dependencies ?? {}), ...Object.keys(e.optionalDependencies ?? {})]),
    );
    for (const [location, entry] of [...keep]) {
      if (entry.optional && !wanted.has(nameOf(location))) {
        keep.delete(location);
        pruned.push(location);
        changed = true;
      }
    }
  }
  return { keep: [...keep.keys()].map(nameOf), pruned: pruned.map(nameOf), prunedLocations: pruned };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? process.cwd());
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const { prunedLocations, pruned } = runtimePackages(lock, (location) => existsSync(path.join(root, location)));
  for (const location of prunedLocations) rmSync(path.join(root, location), { recursive: true, force: true });
  process.stdout.write(`removed ${pruned.length} packages kept only as optional peers of development tools: ${pruned.join(', ')}\n`);
}

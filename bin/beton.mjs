#!/usr/bin/env node
/**
 * Starts one of Beton's built Node programs in this process (no child, so signals reach it):
 *
 *   node bin/beton.mjs worker --queue <pdf-render|send-email|maintenance>
 *   node bin/beton.mjs cli <command…>           (npm run beton -- …)
 *   node bin/beton.mjs start                    (npm start)
 *   node bin/beton.mjs provider-simulator | bank-simulator
 *
 * The programs are JavaScript in dist/ (`npm run build`). Before loading one, the build is
 * checked against dist/manifest.json (written last by the build: every file's size and
 * SHA-256), so a missing, interrupted or damaged build ends with one line saying to run the
 * build, not a stack trace from half a file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const [program, ...args] = process.argv.slice(2);

function refuse(why) {
  process.stderr.write(`beton: ${why}: run \`npm run build\` (in ${root}) and start again.\n`);
  process.exit(1);
}

let manifest;
try {
  manifest = JSON.parse(readFileSync(path.join(dist, 'manifest.json'), 'utf8'));
} catch (error) {
  refuse(
    error?.code === 'ENOENT' ? 'Beton is not built (dist/manifest.json is missing)' : 'the build in dist/ is incomplete (dist/manifest.json is unreadable)',
  );
}
// `tracing` is the worker's preload (below), not a program.
const names = Object.keys(manifest.entries ?? {}).filter((name) => name !== 'tracing');
if (!program || !names.includes(program)) {
  process.stderr.write(`beton: usage: node bin/beton.mjs <${names.join('|')}> [arguments…]${program ? ` (unknown program "${program}")` : ''}\n`);
  process.exit(2);
}
for (const [file, expected] of Object.entries(manifest.files ?? {})) {
  let bytes;
  try {
    bytes = readFileSync(path.join(dist, file));
  } catch {
    refuse(`the build in dist/ is incomplete (dist/${file} is missing)`);
  }
  if (bytes.length !== expected.bytes || createHash('sha256').update(bytes).digest('hex') !== expected.sha256) {
    refuse(`the build in dist/ is damaged (dist/${file} does not match dist/manifest.json)`);
  }
}

const entry = path.join(dist, `${program}.js`);
// A worker's tracing (OTEL_* settings, docs/tracing.md) starts before its modules load, so
// its HTTP and PostgreSQL calls are instrumented; with no OTEL_* set it loads nothing more.
if (program === 'worker') await import(pathToFileURL(path.join(dist, 'tracing.js')).href);
// The program reads its own arguments from process.argv.slice(2), as when started directly.
process.argv = [process.argv[0], entry, ...args];
await import(pathToFileURL(entry).href);

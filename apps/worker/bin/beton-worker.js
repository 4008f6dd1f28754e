#!/usr/bin/env node
// Runs the TypeScript entry through tsx (the project's Node 22 is first on npm's PATH).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const entry = fileURLToPath(new URL('../src/main.ts', import.meta.url));
// Tracing (OTEL_* settings, docs/tracing.md) starts before the worker's modules load.
const tracing = fileURLToPath(new URL('../../../packages/telemetry/src/register.ts', import.meta.url));
const child = spawn(process.execPath, ['--import', 'tsx', '--import', tracing, entry, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => child.kill(s));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

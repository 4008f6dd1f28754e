import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The monorepo root (where prisma.config.ts lives). */
export const repoRoot = path.resolve(import.meta.dirname, '../../..');

/**
 * Applies the committed Prisma migrations (`prisma migrate deploy`) to `url`.
 * Idempotent: already-applied migrations are skipped.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const cli = createRequire(path.join(repoRoot, 'package.json')).resolve('prisma/build/index.js');
  try {
    await run(process.execPath, [cli, 'migrate', 'deploy'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`prisma migrate deploy failed: ${(e.stderr || e.stdout || e.message).trim()}`);
  }
}

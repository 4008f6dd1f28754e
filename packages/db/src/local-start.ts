/**
 * The database of `npm start` (the one-machine launcher), found again by the operators' CLI:
 * the printed commands (`npm run beton -- payroll run …`) must reach the database `npm start`
 * runs on under every setting it honours, in any terminal.
 *
 * - BETON_DATA_DIR: the embedded PostgreSQL's data folder (relative to the repository), one
 *   definition for both (embeddedDataDir).
 * - While it runs, `npm start` records its database URL in .beton/running.json (owner-only: the
 *   URL carries the embedded server's password) with its process id, and removes it when it stops:
 *   a CLI given neither DATABASE_URL nor BETON_DATA_DIR works on that database (runningStart), so
 *   `DATABASE_URL=… npm start` in one terminal and the printed command in another meet.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './migrate.ts';

/** The embedded data folder when BETON_DATA_DIR is not set. */
export const DEFAULT_DATA_DIR = '.beton/postgres';

/** The embedded PostgreSQL's data folder: BETON_DATA_DIR (absolute, or relative to the repository), else .beton/postgres. */
export function embeddedDataDir(env: { BETON_DATA_DIR?: string | undefined }): string {
  return path.resolve(repoRoot, env.BETON_DATA_DIR || DEFAULT_DATA_DIR);
}

const RUNNING_FILE = path.join(repoRoot, '.beton/running.json');

export interface RunningStart {
  pid: number;
  /** The application database's URL (with its password). */
  url: string;
  /** The embedded data folder; null on DATABASE_URL's server. */
  dataDir: string | null;
}

/** Records the database `npm start` runs on (process `pid`); the returned function removes the record. */
export function recordRunningStart(running: RunningStart): () => void {
  mkdirSync(path.dirname(RUNNING_FILE), { recursive: true });
  writeFileSync(RUNNING_FILE, `${JSON.stringify(running)}\n`, { mode: 0o600 });
  return () => {
    // Only our own record: a later start's is left alone.
    if (runningStart()?.pid === running.pid) rmSync(RUNNING_FILE, { force: true });
  };
}

/** The database of an `npm start` that is running now (its process alive), or null. */
export function runningStart(): RunningStart | null {
  if (!existsSync(RUNNING_FILE)) return null;
  let record: RunningStart;
  try {
    record = JSON.parse(readFileSync(RUNNING_FILE, 'utf8')) as RunningStart;
  } catch {
    return null;
  }
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    // EPERM: alive, another user's; ESRCH: a record left by a start that was killed.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return typeof record.url === 'string' ? record : null;
}

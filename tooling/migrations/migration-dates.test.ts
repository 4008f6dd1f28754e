/**
 * No migration is dated in the future. A migration's name starts with its date (YYYYMMDDHHMMSS)
 * and Prisma applies them in name order: one dated days ahead sorts after every migration
 * written until then, so the next `prisma migrate dev` gets a name that sorts before one
 * already applied. The check: every committed migration is dated no later than the newest
 * commit touching prisma/migrations (read from git's own files with isomorphic-git, no git
 * process), and one not committed yet no later than now. In a shallow clone, where that history
 * may be cut off, every migration is checked against now instead (said in the test's name).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { RENAMED_MIGRATIONS } from '@beton/db/migration-renames';

const root = path.resolve(import.meta.dirname, '../..');
const migrationsDir = 'prisma/migrations';

/**
 * A time as a migration name's prefix (YYYYMMDDHHMMSS, UTC). Names are compared with it as
 * strings, as Prisma orders them: a few early names are not valid times (20261205400000 has hour
 * 40) yet still sort by their digits.
 */
export function migrationStamp(at: Date): string {
  return at.toISOString().replace(/\D/g, '').slice(0, 14);
}

/** The repository's git directories: a linked worktree keeps HEAD in its own and objects/refs in the common one. */
function gitDirs(): { common: string; own: string } | undefined {
  const dotGit = path.join(root, '.git');
  if (!existsSync(dotGit)) return undefined;
  if (statSync(dotGit).isDirectory()) return { common: dotGit, own: dotGit };
  const own = path.resolve(root, /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))![1]!.trim());
  const commonFile = path.join(own, 'commondir');
  const common = existsSync(commonFile) ? path.resolve(own, readFileSync(commonFile, 'utf8').trim()) : own;
  return { common, own };
}

/** HEAD's commit: the worktree's HEAD, a ref resolved in the common directory. */
async function headCommit(dirs: { common: string; own: string }): Promise<string> {
  const head = readFileSync(path.join(dirs.own, 'HEAD'), 'utf8').trim();
  const ref = /^ref:\s*(.+)$/.exec(head)?.[1];
  return ref ? git.resolveRef({ fs, gitdir: dirs.common, ref }) : head;
}

const dirs = gitDirs();
const shallow = !dirs || existsSync(path.join(dirs.common, 'shallow'));

describe('migration dates', () => {
  const names = readdirSync(path.join(root, migrationsDir), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();

  it(
    shallow ? 'no migration is dated after now (shallow clone: no history)' : 'no migration is dated after the newest commit touching the migrations',
    async () => {
      const now = new Date();
      let newestCommit = now;
      let committed = new Set<string>();
      if (!shallow && dirs) {
        const ref = await headCommit(dirs);
        const [newest] = await git.log({ fs, gitdir: dirs.common, ref, filepath: migrationsDir, depth: 1 });
        newestCommit = new Date(newest!.commit.committer.timestamp * 1000);
        const files = await git.listFiles({ fs, gitdir: dirs.common, ref });
        committed = new Set(files.filter((f) => f.startsWith(`${migrationsDir}/`)).map((f) => f.split('/')[2]!));
      }
      const late = names.filter((name) => name.slice(0, 14) > migrationStamp(committed.has(name) ? newestCommit : now));
      expect(late, `newest commit touching ${migrationsDir}: ${newestCommit.toISOString()}`).toEqual([]);
    },
  );

  it('migrations renamed since their release keep their order', () => {
    for (const [oldName, newName] of Object.entries(RENAMED_MIGRATIONS)) {
      expect(names).toContain(newName);
      expect(names).not.toContain(oldName);
    }
    // The renamed ones are still applied in the order they were written in.
    const renamed = Object.values(RENAMED_MIGRATIONS);
    expect(names.filter((n) => renamed.includes(n))).toEqual(renamed);
    // And after every migration that was released before them.
    const firstRenamed = names.indexOf(renamed[0]!);
    expect(names.slice(firstRenamed, firstRenamed + renamed.length)).toEqual(renamed);
  });
});

/**
 * `npm test` needs nothing but Node and npm (issue 20): no test, script or program starts a
 * system tool. Every process the code base spawns is Node itself (process.execPath, or a
 * variable `node` holding the project's Node) or npm; anything else would be a tool CI does
 * not have.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../lib/processes.ts';

/** Files allowed to call a system tool for now, and why; an entry that no longer does must go. */
const PENDING: Record<string, string> = {};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', '.next', 'generated', 'dist', '.beton', '.turbo'].includes(name) || name.startsWith('.')) return [];
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|tsx|mts|mjs|js)$/.test(name) ? [p] : [];
  });
}

/**
 * Commands a file starts: the first argument of node:child_process calls (spawn, execFile,
 * exec…, called by name or on the module) that is not Node itself or npm.
 */
function foreignCommands(source: string): string[] {
  const out: string[] = [];
  if (!/['"](node:)?child_process['"]/.test(source)) return out;
  for (const m of source.matchAll(/(?<![\w.])(?:cp\.|childProcess\.)?(spawn|spawnSync|execFile|execFileSync|execSync|exec)\(\s*([^,)]+)/g)) {
    const first = m[2]!.trim();
    if (/^(process\.execPath|node)$/.test(first) || /^['"`](npm|node)['"`]$/.test(first) || /^['"`](npm|node) /.test(first)) continue;
    out.push(`${m[1]}(${first})`);
  }
  return out;
}

describe('no system tools', () => {
  const all = ['apps', 'packages', 'scripts', 'deploy', 'tooling', 'bin'].flatMap((d) => files(path.join(repoRoot, d)));

  it('every process the code starts is Node or npm', () => {
    const found = all
      .map((file) => ({ file: path.relative(repoRoot, file), commands: foreignCommands(readFileSync(file, 'utf8')) }))
      .filter((f) => f.commands.length > 0 && f.file !== 'scripts/test/system-tools.test.ts');
    expect(found.filter((f) => !PENDING[f.file])).toEqual([]);
    // An allowance that is no longer needed is removed.
    for (const file of Object.keys(PENDING))
      expect(
        found.map((f) => f.file),
        `${file} no longer starts a system tool: remove it from PENDING`,
      ).toContain(file);
  });

  it('the check sees a system tool', () => {
    const cp = `import { execFileSync } from 'node:child_process';\n`;
    expect(foreignCommands(`${cp}execFileSync('pdftoppm', ['-r', '72'])`)).toEqual(["execFileSync('pdftoppm')"]);
    expect(foreignCommands(`${cp}cp.execSync(\`pgrep -P \${pid}\`)`)).toHaveLength(1);
    expect(foreignCommands(`${cp}spawn(process.execPath, [file]); spawn('npm', ['start']); /x/.exec(s)`)).toEqual([]);
  });

  it('.ci/run installs nothing but the npm packages', () => {
    const ci = readFileSync(path.join(repoRoot, '.ci/run'), 'utf8');
    expect(ci).not.toMatch(/apt-get|apt |dnf|yum|apk |brew /);
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^npm test$/m);
  });
});

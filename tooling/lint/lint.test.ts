/**
 * The tree's habits, checked with every `npm test`: typescript-eslint with type information
 * (eslint.config.js) finds nothing, and the dependency check (knip.jsonc) finds no package that
 * a file imports without its workspace declaring it, and none declared but unused.
 * `npm run lint` / `npm run deps:check` run each alone, with readable output. The formatter
 * (prettier, .prettierrc.json) leaves every file as it is: `npm run format` writes it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

function run(bin: string, args: string[]) {
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules', bin), ...args], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

describe('habits', () => {
  it('typescript-eslint (type-aware) reports nothing', { timeout: 1_500_000 }, () => {
    const result = run('eslint/bin/eslint.js', ['--format', 'json', '.']);
    const files = JSON.parse(result.stdout || '[]') as Array<{ filePath: string; messages: Array<{ ruleId: string | null; line: number; message: string }> }>;
    const findings = files.flatMap((f) => f.messages.map((m) => `${path.relative(root, f.filePath)}:${m.line} ${m.ruleId ?? 'error'}: ${m.message}`));
    expect(findings, result.stderr).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  });

  it('knip: every import declared, nothing declared unused', { timeout: 300_000 }, () => {
    const result = run('knip/bin/knip.js', ['--reporter', 'json', '--no-config-hints']);
    const report = JSON.parse(result.stdout || '{"issues":[]}') as { issues: Array<Record<string, unknown> & { file: string }> };
    const findings = report.issues.flatMap((issue) =>
      Object.entries(issue)
        .filter(([kind, value]) => kind !== 'file' && Array.isArray(value) && value.length > 0)
        .flatMap(([kind, value]) => (value as Array<{ name: string }>).map((v) => `${issue.file}: ${kind} ${v.name}`)),
    );
    expect(findings, result.stderr).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  });

  it('prettier: every file formatted (npm run format)', { timeout: 300_000 }, () => {
    const result = run('prettier/bin/prettier.cjs', ['--list-different', '.']);
    const unformatted = result.stdout.split('\n').filter(Boolean);
    expect(unformatted, result.stderr).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  });
});

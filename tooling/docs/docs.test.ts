/**
 * The documents stay true: the README is a newcomer's page (at most 300 lines, showing the two
 * commands), every relative link in it and in docs/ leads somewhere (a file, and a heading when
 * the link names one), every docs/ file the code names exists, no document names an issue number, and the README's flow diagram has
 * exactly the arrows the code's enqueue calls make (tooling/docs/flow.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeEdges, compareFlow, readmeFlow, repoRoot } from './flow.ts';

const documents = [
  'README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');
/** Markdown without its fenced code blocks and inline code (links and words there are examples, not links). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = anchor(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

describe('the README', () => {
  it('is a newcomer’s page: at most 300 lines, with the two commands', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    // CI (.ci/run) runs "the README's test command".
    expect(readme).toMatch(/^npm test\b/m);
    expect(readme).toMatch(/^npm install && npm start\b/m);
  });

  it('draws the flow the code enqueues', () => {
    const code = codeEdges();
    // The derivation itself finds the chains every reader relies on (else the comparison proves nothing).
    expect(code).toEqual(
      expect.arrayContaining(['payroll-fanout --> render-slip', 'render-slip --> send-slip-email', '/api/email/events --> apply-email-events']),
    );
    const { missing, extra } = compareFlow(code, readmeFlow());
    expect(
      { missing, extra },
      'README.md "## The flow": add the missing arrows, remove the extra ones (npx tsx tooling/docs/flow.ts lists the code\'s)',
    ).toEqual({
      missing: [],
      extra: [],
    });
  });

  it('a diagram with an arrow the code lacks, or without one it has, fails the comparison', () => {
    const code = ['cron --> a', '/api/x --> b'];
    const flow = (edges: string) => readmeFlow(`## The flow\n\n\`\`\`mermaid\nflowchart LR\n  hook(["POST /api/x"])\n${edges}\n\`\`\`\n\n## Next\n`);
    expect(compareFlow(code, flow('  cron -->|daily| a\n  hook --> b'))).toEqual({ missing: [], extra: [] });
    expect(compareFlow(code, flow('  cron --> a\n  hook --> b\n  a --> b'))).toEqual({ missing: [], extra: ['a --> b'] });
    expect(compareFlow(code, flow('  cron --> a'))).toEqual({ missing: ['/api/x --> b'], extra: [] });
  });
});

describe('README.md and docs/*.md', () => {
  it('every relative link resolves to a file, and to a heading when it names one', () => {
    const dead: string[] = [];
    for (const doc of documents) {
      for (const m of prose(read(doc)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [file, hash] = target.split('#') as [string, string | undefined];
        const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(doc), file)) : doc;
        if (!existsSync(path.join(repoRoot, resolved))) dead.push(`${doc}: ${target} (no ${resolved})`);
        else if (hash && resolved.endsWith('.md') && !anchors(read(resolved)).has(hash)) dead.push(`${doc}: ${target} (no heading "#${hash}" in ${resolved})`);
      }
    }
    expect(dead).toEqual([]);
  });

  it('every docs/ file the code, the deployment or the tests name exists', () => {
    const missing: string[] = [];
    const walk = (dir: string): string[] =>
      readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((e) => {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) return ['node_modules', 'generated', '.next', 'dist'].includes(e.name) ? [] : walk(rel);
        return /\.(ts|tsx|mjs|js|ya?ml|prisma|sql)$/.test(e.name) ? [rel] : [];
      });
    for (const file of ['packages', 'apps', 'scripts', 'deploy', 'tooling', 'prisma', 'bin'].flatMap(walk))
      for (const m of read(file).matchAll(/\bdocs\/[\w-]+\.(?:md|json)\b/g)) if (!existsSync(path.join(repoRoot, m[0]))) missing.push(`${file}: ${m[0]}`);
    expect(missing).toEqual([]);
  });

  it('name no issue numbers', () => {
    const found = documents.flatMap((doc) =>
      read(doc)
        .split('\n')
        .map((line, i) => [i + 1, /\b(?:issues?|stops?)\s+#?\d+\b|\(#\d+\)/i.exec(line)?.[0]] as const)
        .filter(([, hit]) => hit)
        .map(([line, hit]) => `${doc}:${line}: ${hit}`),
    );
    expect(found).toEqual([]);
  });
});

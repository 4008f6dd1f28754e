// Stand-in for Prisma's native `schema-engine` binary (see README.md in this folder).
//
// Prisma's CLI starts the binary named by PRISMA_SCHEMA_ENGINE_BINARY with
//   --datamodels <file>... --datasource <json> [--enabled-preview-features ..] [--extension-types ..]
// and talks JSON-RPC 2.0 over stdin/stdout, one message per line; or it runs
//   --datasource <json> cli <can-connect-to-database|create-database|drop-database>
// and reads errors from stderr; or `--version`.
// We answer all of these with the WebAssembly schema engine that ships inside the `prisma`
// package (prisma/build/schema_engine_bg.wasm), driven the same way Prisma's own
// SchemaEngineWasm does it: Prisma's wasm-bindgen glue (@prisma/schema-engine-wasm) and a
// migration-aware driver adapter (@prisma/adapter-pg bound by @prisma/driver-adapter-utils).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum, DriverAdapterError } from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);
const DEBUG = !!process.env.PRISMA_ENGINE_STANDIN_DEBUG;

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const out = { datamodels: [], datasource: undefined, cli: undefined, version: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--version':
      case '-V':
        out.version = true;
        break;
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--datamodels':
      case '-d':
        out.datamodels.push(argv[++i]);
        break;
      case '--datasource':
        out.datasource = JSON.parse(argv[++i]);
        break;
      case '--enabled-preview-features':
      case '--extension-types':
        i++; // accepted; the WASM engine has no switch for them
        break;
      case 'cli':
        out.cli = argv.slice(i + 1);
        i = argv.length;
        break;
      default:
        if (a.startsWith('--datamodels=')) out.datamodels.push(a.slice(13));
        else if (a.startsWith('--datasource=')) out.datasource = JSON.parse(a.slice(13));
    }
  }
  return out;
}

// ---------------------------------------------------------------- logging (stderr, JSON lines like the native engine)

function logLine(level, message, extra = {}) {
  process.stderr.write(
    JSON.stringify({
      timestamp: new Date().toISOString(),
      level,
      fields: { message, ...extra },
      target: 'schema_engine::logger',
    }) + '\n',
  );
}
const debug = (msg) => {
  if (DEBUG) logLine('DEBUG', String(msg));
};

// ---------------------------------------------------------------- WASM engine loading (Prisma's own glue)

function enginesVersion() {
  try {
    return require('@prisma/engines-version/package.json').prisma.enginesVersion;
  } catch {
    return 'unknown';
  }
}

// The WASM engine reports the reason of a Rust panic through this global before trapping
// (Prisma's CLI defines the same registry).
globalThis.PRISMA_WASM_PANIC_REGISTRY ??= {
  message: '',
  get() {
    return this.message;
  },
  set_message(message) {
    this.message = `RuntimeError: ${message}`;
  },
};

let wasmModulePromise;
function loadWasm() {
  wasmModulePromise ??= (async () => {
    const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const glue = await import(pathToFileURL(gluePath).href);
    // Prefer the engine bundled with the installed CLI (same engines version as `prisma`);
    // fall back to the one shipped next to the glue if the glue cannot serve its imports.
    const candidates = [
      path.join(path.dirname(require.resolve('prisma/package.json')), 'build', 'schema_engine_bg.wasm'),
      path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'),
    ];
    let lastMissing = [];
    for (const file of candidates) {
      if (!fs.existsSync(file)) continue;
      const mod = new WebAssembly.Module(fs.readFileSync(file));
      const imports = WebAssembly.Module.imports(mod);
      const missing = imports.filter((imp) => typeof glue[imp.name] !== 'function').map((imp) => imp.name);
      if (missing.length) {
        lastMissing = missing;
        debug(`glue cannot serve ${file}: missing ${missing.join(', ')}`);
        continue;
      }
      const moduleName = imports[0]?.module ?? './schema_engine_bg.js';
      const instance = new WebAssembly.Instance(mod, { [moduleName]: glue });
      glue.__wbg_set_wasm(instance.exports);
      instance.exports.__wbindgen_start?.();
      debug(`loaded ${file}`);
      return glue;
    }
    throw new Error(`No schema_engine_bg.wasm compatible with @prisma/schema-engine-wasm glue (missing imports: ${lastMissing.slice(0, 5).join(', ')})`);
  })();
  return wasmModulePromise;
}

// ---------------------------------------------------------------- PostgreSQL driver adapter (adapter-pg + fixes)

// PostgreSQL catalog types adapter-pg 7.10 does not map (prisma/orm#27403, half fixed): the
// engine's describer selects e.g. pg_constraint.contype, which is `"char"` (on PostgreSQL 18
// every NOT NULL constraint is such a row), and adapter-pg throws UnsupportedNativeDataType.
// `"char"` is reported as ColumnType.Character (the describer reads it as a char; reporting it
// as text makes PostgreSQL 18 panic), the other catalog types as text.
const CHAR_OID = 18;
const TEXT_OID = 25;
const CATALOG_TYPES_AS_TEXT = new Set([
  24, // regproc
  194, // pg_node_tree
  2202, // regprocedure
  2203, // regoper
  2204, // regoperator
  2205, // regclass
  2206, // regtype
  4096, // regrole
  4089, // regnamespace
  1033, // aclitem
]);
const charColumns = new WeakMap(); // result rows array -> indexes of "char" columns

function fixResultTypes(result) {
  const fields = result?.fields ?? [];
  const chars = [];
  fields.forEach((f, i) => {
    if (f.dataTypeID === CHAR_OID) {
      f.dataTypeID = TEXT_OID;
      chars.push(i);
    } else if (CATALOG_TYPES_AS_TEXT.has(f.dataTypeID)) {
      f.dataTypeID = TEXT_OID;
    }
  });
  if (chars.length && result.rows) charColumns.set(result.rows, chars);
  return result;
}

function patchQueryable(q) {
  const performIO = q.performIO.bind(q);
  q.performIO = async (query) => fixResultTypes(await performIO(query));
  const queryRaw = q.queryRaw.bind(q);
  q.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const i of charColumns.get(result.rows) ?? []) result.columnTypes[i] = ColumnTypeEnum.Character;
    return result;
  };
  return q;
}

function patchAdapter(adapter) {
  patchQueryable(adapter);
  // adapter-pg splits scripts on every `;` which breaks `DO $$ ... $$`, functions and
  // string literals. PostgreSQL's simple-query protocol runs a multi-statement script
  // whole (as the native engine does), so send it as one query.
  adapter.executeScript = async (script) => {
    try {
      await adapter.client.query(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...args) => patchQueryable(await startTransaction(...args));
  return adapter;
}

function pgSettings(url) {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') || undefined;
  const config = { connectionString: url };
  if (schema) config.options = `-c search_path="${schema.replaceAll('"', '""')}"`;
  return { config, options: schema ? { schema } : undefined };
}

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = '/' + encodeURIComponent(database);
  return u.toString();
}

function databaseOf(url) {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

const quoteIdent = (name) => `"${String(name).replaceAll('"', '""')}"`;

async function connectAdapter(url) {
  const { config, options } = pgSettings(url);
  return patchAdapter(await new PrismaPg(config, options).connect());
}

// Runs one statement on a maintenance connection (not inside any transaction).
async function adminExecute(url, sql) {
  const adapter = await connectAdapter(url);
  try {
    await adapter.executeScript(sql);
  } finally {
    await adapter.dispose();
  }
}

const liveShadowDbs = new Map(); // name -> admin url

async function dropShadowDb(adminUrl, name) {
  try {
    await adminExecute(adminUrl, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  } catch {
    await adminExecute(adminUrl, `DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
  }
  liveShadowDbs.delete(name);
}

class StandInPgFactory {
  provider = 'postgres';
  adapterName = '@prisma/adapter-pg';

  constructor(url, shadowDatabaseUrl) {
    this.url = url;
    this.shadowDatabaseUrl = shadowDatabaseUrl;
  }

  connect() {
    return connectAdapter(this.url);
  }

  // adapter-pg's own connectToShadowDb spreads `database` next to `connectionString`, which
  // wins in node-postgres: the "shadow" pool connected back to the main database, and the
  // DROP ran while it was still connected. Here the shadow URL names the new database, the
  // pool is closed before the drop, and the drop is forced.
  async connectToShadowDb() {
    if (this.shadowDatabaseUrl) return connectAdapter(this.shadowDatabaseUrl);
    const name = `prisma_migrate_shadow_db_${randomUUID()}`;
    await adminExecute(this.url, `CREATE DATABASE ${quoteIdent(name)}`);
    liveShadowDbs.set(name, this.url);
    let adapter;
    try {
      adapter = await connectAdapter(withDatabase(this.url, name));
    } catch (e) {
      await dropShadowDb(this.url, name);
      throw e;
    }
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      try {
        await dispose();
      } finally {
        await dropShadowDb(this.url, name);
      }
    };
    return adapter;
  }
}

// ---------------------------------------------------------------- engines

const args = parseArgs(process.argv.slice(2));
const datasource = args.datasource ?? {};

function readDatamodels() {
  if (!args.datamodels.length) return undefined;
  return args.datamodels.map((file) => [file, fs.readFileSync(path.resolve(file), 'utf8')]);
}

const engines = new Map(); // url -> Promise<{ engine, factory }>
function engineFor(url) {
  if (!url) throw userError('P1012', 'The datasource URL is empty: set `datasource.url` in prisma.config.ts.');
  if (!/^postgres(ql)?:\/\//.test(url)) throw userError('P1013', 'This schema engine stand-in only supports PostgreSQL (postgres:// or postgresql:// URLs).');
  if (!engines.has(url)) {
    engines.set(
      url,
      (async () => {
        const glue = await loadWasm();
        const factory = bindMigrationAwareSqlAdapterFactory(new StandInPgFactory(url, url === datasource.url ? datasource.shadowDatabaseUrl : undefined));
        const engine = await glue.SchemaEngine.new({ datamodels: readDatamodels() }, debug, factory);
        return { engine, factory };
      })(),
    );
  }
  return engines.get(url);
}

// The CLI only selects the database through prisma.config.ts, but a few inputs can name a URL.
function urlFor(method, params) {
  const urls = new Set();
  const visit = (target) => {
    if (target && (target.tag === 'url' || target.tag === 'ConnectionString') && target.url) urls.add(target.url);
  };
  if (method === 'diff') {
    visit(params?.from);
    visit(params?.to);
  }
  if (method === 'dbExecute') visit(params?.datasourceType);
  if (method === 'ensureConnectionValidity' || method === 'getDatabaseVersion') visit(params?.datasource);
  if (method === 'introspectSql' && params?.url) urls.add(params.url);
  if (urls.size > 1) throw userError('P1012', 'The schema engine stand-in cannot connect to two different databases in one command.');
  return urls.size ? [...urls][0] : datasource.url;
}

// ---------------------------------------------------------------- errors

class RpcError extends Error {
  constructor(data) {
    super(data.message);
    this.data = data;
  }
}
const userError = (code, message, meta = {}) => new RpcError({ is_panic: false, message, meta, error_code: code });

function adapterErrorMessage(cause) {
  if (!cause || typeof cause !== 'object') return String(cause);
  switch (cause.kind) {
    case 'postgres':
      return [cause.message, cause.detail && `DETAIL: ${cause.detail}`, cause.hint && `HINT: ${cause.hint}`].filter(Boolean).join('\n');
    case 'DatabaseDoesNotExist':
      return `Database \`${cause.db ?? ''}\` does not exist`;
    case 'DatabaseNotReachable':
      return `Can't reach database server at \`${cause.host ?? ''}:${cause.port ?? ''}\``;
    case 'AuthenticationFailed':
      return `Authentication failed for user \`${cause.user ?? ''}\``;
    default:
      return cause.message ?? JSON.stringify(cause);
  }
}

function toRpcErrorData(error, engineRecord) {
  if (error instanceof RpcError) return error.data;
  if (error instanceof DriverAdapterError) return { is_panic: false, message: adapterErrorMessage(error.cause), meta: error.cause };
  // The WASM engine throws either a user-facing error ({ code, message, meta }), a panic
  // (WebAssembly.RuntimeError), or a SchemaConnectorError wrapping a driver adapter error.
  if (error instanceof WebAssembly.RuntimeError || error?.name === 'RuntimeError') {
    const panic = globalThis.PRISMA_WASM_PANIC_REGISTRY?.get?.() || error.message;
    return { is_panic: true, message: panic, meta: {}, error: { message: panic }, backtrace: error.stack };
  }
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string' && /^P\d{4}$/.test(error.code)) {
    return { is_panic: false, message: error.message, meta: error.meta ?? {}, error_code: error.code };
  }
  let message = error?.message ?? String(error);
  // Errors raised by our JS adapter code are kept in the factory's registry (kind GenericJs).
  const id = error?.cause?.id ?? error?.id;
  if (typeof id === 'number' && engineRecord?.factory?.errorRegistry) {
    const rec = engineRecord.factory.errorRegistry.consumeError(id);
    if (rec?.error) message = `${message}\n${rec.error?.message ?? rec.error}`;
  }
  if (error?.cause && typeof error.cause === 'object' && !('id' in error.cause)) {
    message = `${message}\n${adapterErrorMessage(error.cause)}`;
  }
  return { is_panic: false, message, meta: {} };
}

// ---------------------------------------------------------------- `cli` sub-commands (one-shot)

function cliErrorExit(code, message) {
  // The CLI skips the first stderr line and parses the rest as JSON log lines.
  process.stderr.write('schema-engine stand-in error\n');
  process.stderr.write(
    JSON.stringify({
      timestamp: new Date().toISOString(),
      level: 'ERROR',
      fields: { is_panic: false, error_code: code, message },
      target: 'schema_engine::logger',
    }),
  );
  process.exit(1);
}

function classifyConnectError(e, url) {
  const u = new URL(url);
  const where = `${u.hostname}:${u.port || 5432}`;
  const cause = e instanceof DriverAdapterError ? e.cause : undefined;
  const code = cause?.originalCode ?? cause?.code ?? e?.code;
  if (cause?.kind === 'DatabaseDoesNotExist' || code === '3D000')
    return ['P1003', `Database \`${databaseOf(url)}\` does not exist on the database server at \`${where}\`.`];
  if (cause?.kind === 'AuthenticationFailed' || code === '28P01' || code === '28000')
    return [
      'P1000',
      `Authentication failed against database server at \`${where}\`, the provided database credentials for \`${decodeURIComponent(u.username)}\` are not valid.`,
    ];
  if (cause?.kind === 'DatabaseNotReachable' || ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code))
    return ['P1001', `Can't reach database server at \`${where}\`\n\nPlease make sure your database server is running at \`${where}\`.`];
  return ['P1000', adapterErrorMessage(cause) || e?.message || String(e)];
}

async function canConnect(url) {
  const adapter = await connectAdapter(url);
  try {
    await adapter.queryRaw({ sql: 'SELECT 1', args: [], argTypes: [] });
  } finally {
    await adapter.dispose();
  }
}

async function runCli([command]) {
  const url = datasource.url;
  if (!url) cliErrorExit('P1012', 'The datasource URL is empty: set `datasource.url` in prisma.config.ts.');
  const adminUrl = withDatabase(url, 'postgres');
  const name = databaseOf(url);
  try {
    switch (command) {
      case 'can-connect-to-database':
        await canConnect(url);
        process.stdout.write('Connection successful\n');
        break;
      case 'create-database':
        await adminExecute(adminUrl, `CREATE DATABASE ${quoteIdent(name)}`);
        process.stdout.write(`Database '${name}' was successfully created.\n`);
        break;
      case 'drop-database':
        await adminExecute(adminUrl, `DROP DATABASE ${quoteIdent(name)}`);
        process.stdout.write(`The database was successfully dropped.\n`);
        break;
      default:
        cliErrorExit('P1000', `Unknown cli command: ${command}`);
    }
  } catch (e) {
    const [code, message] = classifyConnectError(e, url);
    cliErrorExit(code, message);
  }
  process.exit(0);
}

// ---------------------------------------------------------------- JSON-RPC server

const WASM_METHOD = {
  applyMigrations: 'applyMigrations',
  createMigration: 'createMigration',
  dbExecute: 'dbExecute',
  debugPanic: 'debugPanic',
  devDiagnostic: 'devDiagnostic',
  diagnoseMigrationHistory: 'diagnoseMigrationHistory',
  diff: 'diff',
  ensureConnectionValidity: 'ensureConnectionValidity',
  evaluateDataLoss: 'evaluateDataLoss',
  getDatabaseVersion: 'version',
  introspect: 'introspect',
  introspectSql: 'introspectSql',
  markMigrationApplied: 'markMigrationApplied',
  markMigrationRolledBack: 'markMigrationRolledBack',
  reset: 'reset',
  schemaPush: 'schemaPush',
};

const requestsInFlight = new Set();
let nextOutgoingId = 1_000_000;
const pendingOutgoing = new Map();

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\n');
}

// The native engine prints `migrate diff` output through a `print` request to the CLI.
function printViaCli(content) {
  const id = nextOutgoingId++;
  return new Promise((resolve) => {
    pendingOutgoing.set(id, resolve);
    send({ jsonrpc: '2.0', id, method: 'print', params: { content } });
  });
}

async function callEngine(method, params) {
  if (method === 'createDatabase') {
    const url = params?.datasource?.url ?? datasource.url;
    await adminExecute(withDatabase(url, 'postgres'), `CREATE DATABASE ${quoteIdent(databaseOf(url))}`);
    return { databaseName: databaseOf(url) };
  }
  const wasmMethod = WASM_METHOD[method];
  if (!wasmMethod) throw userError('P1000', `The schema engine stand-in does not implement \`${method}\`.`);
  const url = urlFor(method, params);
  const record = await engineFor(url);
  const input = method === 'getDatabaseVersion' ? undefined : params;
  for (let attempt = 1; ; attempt++) {
    try {
      // Call as a method: wasm-bindgen needs `this` bound to the engine.
      const result = await record.engine[wasmMethod](input);
      if (method === 'diff' && result && typeof result.stdout === 'string') {
        const text = result.stdout.endsWith('\n') ? result.stdout.slice(0, -1) : result.stdout;
        if (text.length) await printViaCli(text);
        return { exitCode: result.exitCode, stdout: null };
      }
      if (result === undefined) return method === 'dbExecute' || method === 'reset' ? null : {};
      return result;
    } catch (error) {
      // The WASM engine's evaluateDataLoss/createMigration get no shadow-database factory:
      // they read the schema of the migrations history from a cache that devDiagnostic fills
      // (devDiagnostic does get the factory). When `migrate dev` first applies pending
      // migrations, devDiagnostic returns early without filling it, and evaluateDataLoss fails
      // with "PostgreSQL shadow DB must be provided through an external factory" (re-running
      // the command passed). Fill the cache with a devDiagnostic over the same migrations and
      // retry once.
      const msg = String(error?.message ?? error);
      if (attempt === 1 && params?.migrationsList && /shadow DB must be provided through an external factory/i.test(msg)) {
        debug(`${method}: priming the migrations schema cache with devDiagnostic, then retrying`);
        await record.engine.devDiagnostic({
          migrationsList: params.migrationsList,
          filters: params.filters ?? params.filter ?? { externalTables: [], externalEnums: [] },
        });
        continue;
      }
      error.engineRecord = record;
      throw error;
    }
  }
}

async function serve() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let queue = Promise.resolve();
  const inFlight = new Set();
  rl.on('line', (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${e.message}` } });
      return;
    }
    if (msg.method === undefined) {
      // A response to one of our own requests (print).
      const resolve = pendingOutgoing.get(msg.id);
      if (resolve) {
        pendingOutgoing.delete(msg.id);
        resolve(msg.result);
      }
      return;
    }
    const job = (queue = queue.then(async () => {
      requestsInFlight.add(msg.id);
      try {
        const result = await callEngine(msg.method, msg.params);
        send({ jsonrpc: '2.0', id: msg.id, result: result ?? null });
      } catch (error) {
        const data = toRpcErrorData(error, error?.engineRecord);
        debug(`${msg.method} failed: ${data.message}`);
        if (data.is_panic) logLine('ERROR', data.message, { is_panic: true, backtrace: data.backtrace ?? '' });
        send({
          jsonrpc: '2.0',
          id: msg.id,
          error: { code: 4466, message: 'An error happened. Check the data field for details.', data },
        });
      }
    }));
    inFlight.add(job);
    job.finally(() => {
      inFlight.delete(job);
      requestsInFlight.delete(msg.id);
    });
  });
  rl.on('close', async () => {
    await Promise.allSettled([...inFlight]);
    await shutdown(0);
  });
}

async function shutdown(code) {
  for (const p of engines.values()) {
    try {
      const { engine } = await p;
      engine.free();
    } catch {
      // ignore
    }
  }
  for (const [name, adminUrl] of [...liveShadowDbs]) {
    await dropShadowDb(adminUrl, name).catch(() => {});
  }
  process.exit(code);
}

// ---------------------------------------------------------------- main

if (args.version) {
  process.stdout.write(`schema-engine-cli ${enginesVersion()}\n`);
  process.exit(0);
} else if (args.help) {
  process.stdout.write('schema-engine stand-in (WebAssembly schema engine over @prisma/adapter-pg); see tooling/prisma-engine/README.md\n');
  process.exit(0);
} else if (args.cli) {
  await runCli(args.cli);
} else {
  // Anything thrown outside a request (e.g. from a WASM callback) ends the engine the way a
  // native panic does: an ERROR log line on stderr and exit code 101.
  const crash = (error) => {
    const panic = globalThis.PRISMA_WASM_PANIC_REGISTRY.get();
    const message = panic || String(error?.message ?? error);
    logLine('ERROR', message, { is_panic: true, backtrace: String(error?.stack ?? '') });
    // Answer the request in flight so the CLI shows the reason, then exit like a native panic.
    for (const id of requestsInFlight) {
      send({
        jsonrpc: '2.0',
        id,
        error: {
          code: 4466,
          message: 'An error happened. Check the data field for details.',
          data: { is_panic: true, message, meta: {}, error: { message } },
        },
      });
    }
    process.stdout.write('', () => process.exit(101));
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  process.on('SIGTERM', () => shutdown(143));
  process.on('SIGINT', () => shutdown(130));
  await serve();
}

import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Bad usage (unknown flag, missing argument, invalid value): exit 2 with one line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** Usage text printed after the message (the command's help). */
    readonly usage?: string,
  ) {
    super(message);
  }
}

/** A failure the operator can act on: one line, no stack. Default exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface Output {
  out: (line?: string) => void;
  err: (line: string) => void;
}

export const stdio: Output = {
  out: (line = '') => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export interface Command {
  /** Words that select the command, e.g. ['jobs', 'stats']. */
  path: string[];
  summary: string;
  /** Full `--help` text. */
  help: string;
  run(argv: string[], io: Output): Promise<number> | number;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs in strict mode with a `--help` flag; its errors become a UsageError
 * carrying the command's help.
 */
export function parse<O extends Options>(argv: string[], options: O, help: string, { positionals = false } = {}) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: positionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, '.'), help);
  }
}

/** A number flag: absent → `fallback`; not a number (or out of range) → UsageError. */
export function numberFlag(
  value: string | undefined,
  name: string,
  fallback: number,
  { integer = false, min = -Infinity, max = Infinity }: { integer?: boolean; min?: number; max?: number } = {},
): number {
  if (value === undefined) return fallback;
  const n = Number(value.replaceAll('_', '').replaceAll(',', ''));
  if (value.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    const range = [min > -Infinity ? `>= ${min}` : '', max < Infinity ? `<= ${max}` : ''].filter(Boolean).join(' and ');
    throw new UsageError(`--${name} must be ${integer ? 'a whole number' : 'a number'}${range ? ` ${range}` : ''}, got "${value}"`);
  }
  return n;
}

/** The operator running the CLI, for the audit log: 'cli:<user>'. */
export function cliActor(): string {
  let user = process.env.USER || process.env.LOGNAME;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  return `cli:${user}`;
}

/**
 * CLI: run the bank simulator.
 *
 *   npm run sim:bank -- [--port 8026] [--host 127.0.0.1] [--api-key bank-dev-key] [--credit-delay 0] [--credit-spread 0]
 *
 * Environment (flags win): PORT or BANK_PORT, BANK_HOST, BANK_API_KEY, BANK_CREDIT_DELAY_MS,
 * BANK_CREDIT_SPREAD_MS.
 * Prints "bank simulator listening on <url>" and stops on SIGTERM/SIGINT.
 */
import { startBankSimulator, type BankSimulatorOptions } from './bank.ts';
import { numberOption, parseArgs, stringOption } from './http-util.ts';

const args = parseArgs(process.argv.slice(2));
const opts: BankSimulatorOptions = { log: (l) => console.log(l) };
const port = numberOption(args, 'port', ['BANK_PORT', 'PORT']);
if (port !== undefined) opts.port = port;
const host = stringOption(args, 'host', 'BANK_HOST');
if (host !== undefined) opts.host = host;
const apiKey = stringOption(args, 'api-key', 'BANK_API_KEY');
if (apiKey !== undefined) opts.apiKey = apiKey;
const delay = numberOption(args, 'credit-delay', 'BANK_CREDIT_DELAY_MS');
if (delay !== undefined) opts.creditDelayMs = delay;
const spread = numberOption(args, 'credit-spread', 'BANK_CREDIT_SPREAD_MS');
if (spread !== undefined) opts.creditSpreadMs = spread;

const bank = await startBankSimulator(opts);
console.log(
  `bank simulator listening on ${bank.url} (api key ${bank.apiKey}, credit delay ${opts.creditDelayMs ?? 0} ms + up to ${opts.creditSpreadMs ?? 0} ms)`,
);

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  console.log(`bank simulator: ${signal}, stopping`);
  bank.close().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

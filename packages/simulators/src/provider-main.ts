/**
 * CLI: run the SendGrid-compatible provider simulator.
 *
 *   npm run sim:provider -- [--port 8025] [--host 127.0.0.1] [--api-key SG.beton-dev]
 *     [--rate 40] [--latency 1200] [--spread 200] [--seed 1] [--bounce-domains a.example,b.example]
 *     [--webhook-url http://…/api/email/events] [--activity-api] [--verified-senders a@b.example,…]
 *     [--activity-delay 0] [--no-attachment-bytes]
 *
 * Environment (flags win): PORT or PROVIDER_PORT, PROVIDER_HOST, PROVIDER_API_KEY (or
 * SENDGRID_API_KEY), PROVIDER_RATE, PROVIDER_LATENCY_MS, PROVIDER_LATENCY_SPREAD_MS,
 * PROVIDER_SEED, PROVIDER_BOUNCE_DOMAINS (comma-separated), PROVIDER_ACTIVITY_DELAY_MS,
 * PROVIDER_WEBHOOK_URL, PROVIDER_ACTIVITY_API=1, PROVIDER_VERIFIED_SENDERS,
 * PROVIDER_STORE_ATTACHMENTS=0.
 * Prints "provider simulator listening on <url>" and stops on SIGTERM/SIGINT.
 */
import { numberOption, parseArgs, stringOption } from './http-util.ts';
import { startProviderSimulator, type ProviderSimulatorOptions } from './provider.ts';

const args = parseArgs(process.argv.slice(2));
const opts: ProviderSimulatorOptions = { log: (l) => console.log(l) };
const port = numberOption(args, 'port', ['PROVIDER_PORT', 'PORT']);
if (port !== undefined) opts.port = port;
const host = stringOption(args, 'host', 'PROVIDER_HOST');
if (host !== undefined) opts.host = host;
const apiKey = stringOption(args, 'api-key', ['PROVIDER_API_KEY', 'SENDGRID_API_KEY']);
if (apiKey !== undefined) opts.apiKey = apiKey;
const rate = numberOption(args, 'rate', 'PROVIDER_RATE');
if (rate !== undefined) opts.ratePerSecond = rate;
const latency = numberOption(args, 'latency', 'PROVIDER_LATENCY_MS');
if (latency !== undefined) opts.latencyMs = latency;
const spread = numberOption(args, 'spread', 'PROVIDER_LATENCY_SPREAD_MS');
if (spread !== undefined) opts.latencySpreadMs = spread;
const seed = numberOption(args, 'seed', 'PROVIDER_SEED');
if (seed !== undefined) opts.seed = seed;
const activityDelay = numberOption(args, 'activity-delay', 'PROVIDER_ACTIVITY_DELAY_MS');
if (activityDelay !== undefined) opts.activityDelayMs = activityDelay;
const bounce = stringOption(args, 'bounce-domains', 'PROVIDER_BOUNCE_DOMAINS');
if (bounce !== undefined)
  opts.bounceDomains = bounce
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
const webhookUrl = stringOption(args, 'webhook-url', 'PROVIDER_WEBHOOK_URL');
if (webhookUrl !== undefined) opts.webhook = { url: webhookUrl };
if (args.has('activity-api') || process.env['PROVIDER_ACTIVITY_API'] === '1') opts.activityApi = true;
const senders = stringOption(args, 'verified-senders', 'PROVIDER_VERIFIED_SENDERS');
if (senders !== undefined)
  opts.verifiedSenders = senders
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
if (args.has('no-attachment-bytes') || process.env['PROVIDER_STORE_ATTACHMENTS'] === '0') opts.storeAttachmentBytes = false;

const sim = await startProviderSimulator(opts);
console.log(
  `provider simulator listening on ${sim.url} (api key ${sim.apiKey}, ${sim.faults().ratePerSecond}/s, latency ${opts.latencyMs ?? 1200}±${opts.latencySpreadMs ?? 200} ms)`,
);
console.log(`  inbox: ${sim.url}/inbox   stats: ${sim.url}/_admin/stats   faults: POST ${sim.url}/_admin/faults`);

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  console.log(`provider simulator: ${signal}, stopping`);
  sim.close().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

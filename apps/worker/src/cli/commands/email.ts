import { resumeQueue } from '@beton/jobs';
import { createMailer } from '@beton/payroll';
import { loadConfig } from '../../config.ts';
import { cliActor, CliError, parse, type Command } from '../args.ts';
import { usingDatabase } from '../database.ts';

const checkHelp = `Usage: beton email check

The account preflight a send-email worker runs before it takes a job (issue 16): the API key
works and may send (GET /v3/scopes), the sender EMAIL_FROM is verified and the plan can send (a
sandbox-mode send: validated, never delivered), and the Email Activity API answers when
EMAIL_ACTIVITY_API=on. Reads the worker's settings (SENDGRID_API_KEY, SENDGRID_BASE_URL,
EMAIL_FROM, EMAIL_FROM_NAME, EMAIL_ACTIVITY_API). Exit 0 when it passes, 1 with one line per
setting to fix.`;

export const emailCheck: Command = {
  path: ['email', 'check'],
  summary: 'check the email account: key, sender, plan, activity API',
  help: checkHelp,
  async run(argv, io) {
    const { values } = parse(argv, {}, checkHelp);
    if (values.help) return (io.out(checkHelp), 0);
    // The worker's own validated settings; the database is not needed for this check.
    let config;
    try {
      config = loadConfig(['--queue', 'send-email'], { ...process.env, DATABASE_URL: process.env.DATABASE_URL || 'postgres://unused@127.0.0.1/unused' });
    } catch (error) {
      throw new CliError((error as Error).message, 1);
    }
    const mailer = createMailer({
      apiKey: config.sendgrid.apiKey,
      from: config.email.from,
      timeoutMs: config.email.requestTimeoutMs,
      ...(config.sendgrid.baseUrl ? { baseUrl: config.sendgrid.baseUrl } : {}),
    });
    const result = await mailer.checkAccount({ activity: config.email.activityApi });
    for (const p of result.problems) io.err(`${p.setting}: ${p.message}`);
    for (const i of result.inconclusive) io.err(`not checked: ${i}`);
    if (result.ok && result.inconclusive.length === 0)
      io.out(`Email account OK: key, sender ${config.email.from.email}, plan${config.email.activityApi ? ', activity API' : ''}.`);
    return result.ok && result.inconclusive.length === 0 ? 0 : 1;
  },
};

const resumeHelp = `Usage: beton email resume

Resumes the send-email queue after an account fault paused it (the admin console's "Resume
sending" does the same). Audited. If the fault is still there, the next send pauses it again.`;

export const emailResume: Command = {
  path: ['email', 'resume'],
  summary: 'resume the send-email queue paused by an account fault',
  help: resumeHelp,
  async run(argv, io) {
    const { values } = parse(argv, {}, resumeHelp);
    if (values.help) return (io.out(resumeHelp), 0);
    const lifted = await usingDatabase((db) => resumeQueue(db.pool, 'send-email', cliActor()));
    io.out(
      lifted ? `Resumed send-email (it was paused since ${lifted.pausedAt.toISOString()}: ${lifted.reason}).` : 'send-email was not paused; nothing to do.',
    );
    return 0;
  },
};

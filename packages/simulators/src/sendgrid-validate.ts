/**
 * Validation of a SendGrid v3 `POST /v3/mail/send` body, with SendGrid's error messages and
 * field paths (`personalizations.0.to.0.email`, `from.email`, `content`, `attachments.0.content`…).
 * Covers what Beton sends and the common mistakes; not every rule SendGrid has.
 */

export interface SendGridError {
  message: string;
  field: string | null;
  help: string | null;
}

export interface EmailAddress {
  email: string;
  name?: string;
}

/**
 * Unreachable addresses of the simulator: syntactically valid, so SendGrid accepts the request
 * (202) and the receiving server bounces it later (a `bounce` event); the address is then
 * suppressed and later sends to it are dropped (a `dropped` event, "Bounced Address").
 * Syntactically invalid addresses get 400 "Does not contain a valid address." at once.
 */
export interface AddressRule {
  /** Lower-case domains; an address at the domain or any of its subdomains bounces. */
  bounceDomains: readonly string[];
  /** Lower-case full addresses that bounce. */
  bounceAddresses: readonly string[];
}

/** Default bounce list: anything at `invalid.example` (and `*.invalid.example`). */
export const DEFAULT_BOUNCE_DOMAINS: readonly string[] = ['invalid.example'];

const LOCAL_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const TLD = '(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})';
const EMAIL_RE = new RegExp(`^${LOCAL_ATOM}(?:\\.${LOCAL_ATOM})*@(?:${LABEL}\\.)+${TLD}$`);

/**
 * Syntax check, close to what SendGrid accepts: `local@domain.tld`, dot-atom local part (no
 * quoted strings, no leading/trailing/double dots, at most 64 characters), a domain of at
 * least two labels with an alphabetic (or `xn--`) top-level label, at most 254 characters.
 * `user@localhost`, `user@1.2.3.4`, `a b@x.com`, `a..b@x.com`, `@x.com` are invalid.
 */
export function isValidEmailSyntax(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  if (at < 1 || at > 64) return false;
  return EMAIL_RE.test(email);
}

/** True when the (syntactically valid) address is unreachable: accepted, then bounced. Case-insensitive. */
export function isBounceAddress(email: string, rule: AddressRule): boolean {
  const lower = email.toLowerCase();
  if (rule.bounceAddresses.includes(lower)) return true;
  const domain = lower.slice(lower.lastIndexOf('@') + 1);
  return rule.bounceDomains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/** An address that gets delivered: valid syntax and not unreachable. */
export function isDeliverableAddress(email: string, rule: AddressRule): boolean {
  return isValidEmailSyntax(email) && !isBounceAddress(email, rule);
}

export interface ValidMail {
  personalizations: Array<
    Record<string, unknown> & { to: EmailAddress[]; cc?: EmailAddress[]; bcc?: EmailAddress[]; subject?: string; custom_args?: Record<string, string> }
  >;
  from: EmailAddress;
  subject?: string;
  content?: Array<{ type: string; value: string }>;
  template_id?: string;
  attachments?: Array<{ content: string; filename: string; type?: string; disposition?: string; content_id?: string }>;
  custom_args?: Record<string, string>;
  mail_settings?: { sandbox_mode?: { enable?: boolean } };
  [key: string]: unknown;
}

const err = (message: string, field: string | null): SendGridError => ({ message, field, help: null });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// A plain character class (no grouped repetition): linear and safe on 30 MB strings.
const BASE64_CHARS_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard padded base64 (line breaks allowed). */
export function isBase64(s: string): boolean {
  const t = s.includes('\n') ? s.replace(/\r?\n/g, '') : s;
  return t.length > 0 && t.length % 4 === 0 && BASE64_CHARS_RE.test(t);
}

const MSG = {
  personalizations: 'The personalizations field is required and must have at least one personalization.',
  to: 'The to array is required for all personalization objects, and must have at least one email object with a valid email address.',
  invalidAddress: 'Does not contain a valid address.',
  from: 'The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.',
  fromEmail: 'The from email does not contain a valid address.',
  replyTo: 'The reply_to email does not contain a valid address.',
  subject:
    'The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.',
  content:
    'Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block. We typically suggest both text/plain and text/html blocks are included, but only one block is required.',
  contentType: 'The content type must be a string at least one character in length.',
  contentValue: 'The content value must be a string at least one character in length.',
  contentOrder: 'If present, text/plain must be first, followed by text/html, followed by any other content.',
  attachmentContent: 'The attachment content must be base64 encoded.',
  attachmentFilename: 'The attachment filename parameter is required.',
  customArgsSize: 'The custom_args parameter must not exceed 10,000 bytes',
} as const;

function checkAddressList(list: unknown, field: string, errors: SendGridError[], seen: Map<string, string>): void {
  if (!Array.isArray(list)) {
    errors.push(err(`Invalid type. Expected: array, given: ${typeName(list)}.`, field));
    return;
  }
  list.forEach((entry: unknown, j) => {
    const f = `${field}.${j}.email`;
    const email = isObject(entry) ? entry['email'] : undefined;
    if (typeof email !== 'string' || !isValidEmailSyntax(email)) {
      errors.push(err(MSG.invalidAddress, f));
      return;
    }
    const lower = email.toLowerCase();
    if (seen.has(lower)) {
      errors.push(
        err(
          `Each email address in the personalization block should be unique between to, cc, and bcc. We found the first duplicate instance of [${email}] in the ${field} field.`,
          field,
        ),
      );
    } else {
      seen.set(lower, field);
    }
  });
}

function checkCustomArgs(v: unknown, field: string, errors: SendGridError[]): void {
  if (!isObject(v)) {
    errors.push(err(`Invalid type. Expected: object, given: ${typeName(v)}.`, field));
    return;
  }
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') errors.push(err(`Invalid type. Expected: string, given: ${typeName(val)}.`, `${field}.${k}`));
  }
}

/**
 * Validates a parsed mail-send body. Returns SendGrid-shaped errors (empty when valid). Limits
 * from SendGrid's OpenAPI description (sendgrid-oai, tsg_mail_v3): personalizations maxItems
 * 1000, cc/bcc maxItems 1000, categories maxItems 10 (unique, each at most 255 characters),
 * custom_args at most 10,000 bytes; and the Mail Send docs' "The total number of recipients
 * must be less than 1000" per request.
 */
export function validateMailSend(body: unknown): { ok: true; mail: ValidMail } | { ok: false; errors: SendGridError[] } {
  if (!isObject(body)) return { ok: false, errors: [err('Bad Request', null)] };
  const errors: SendGridError[] = [];
  const templateId = body['template_id'];
  const hasTemplate = typeof templateId === 'string' && templateId.length > 0;
  if (templateId !== undefined && !hasTemplate) {
    errors.push(err('The template_id must be a valid GUID, you provided ' + JSON.stringify(templateId) + '.', 'template_id'));
  }

  // personalizations
  const ps = body['personalizations'];
  let everyPersonalizationHasSubject = false;
  if (!Array.isArray(ps) || ps.length === 0) {
    errors.push(err(MSG.personalizations, 'personalizations'));
  } else if (ps.length > 1000) {
    errors.push(err('The personalizations field is limited to 1000 personalizations per request.', 'personalizations'));
  } else {
    everyPersonalizationHasSubject = true;
    let recipients = 0;
    for (const p of ps) if (isObject(p)) for (const k of ['to', 'cc', 'bcc']) if (Array.isArray(p[k])) recipients += (p[k] as unknown[]).length;
    if (recipients > 1000) {
      errors.push(
        err(
          'The total number of recipients must be less than 1000. This includes all recipients defined within the to, cc, and bcc parameters, across each object that you include in the personalizations array.',
          'personalizations',
        ),
      );
    }
    ps.forEach((p: unknown, i) => {
      const base = `personalizations.${i}`;
      if (!isObject(p)) {
        errors.push(err(`Invalid type. Expected: object, given: ${typeName(p)}.`, base));
        everyPersonalizationHasSubject = false;
        return;
      }
      const to = p['to'];
      const seen = new Map<string, string>();
      if (!Array.isArray(to) || to.length === 0) errors.push(err(MSG.to, `${base}.to`));
      else checkAddressList(to, `${base}.to`, errors, seen);
      if (p['cc'] !== undefined) checkAddressList(p['cc'], `${base}.cc`, errors, seen);
      if (p['bcc'] !== undefined) checkAddressList(p['bcc'], `${base}.bcc`, errors, seen);
      if (seen.size > 1000)
        errors.push(
          err(
            'The total number of recipients must be less than 1000. This includes all recipients defined within the to, cc, and bcc parameters, across each object that you include in the personalizations array.',
            base,
          ),
        );
      const subj = p['subject'];
      if (subj !== undefined && typeof subj !== 'string') errors.push(err(`Invalid type. Expected: string, given: ${typeName(subj)}.`, `${base}.subject`));
      if (typeof subj !== 'string' || subj.length === 0) everyPersonalizationHasSubject = false;
      if (p['custom_args'] !== undefined) checkCustomArgs(p['custom_args'], `${base}.custom_args`, errors);
    });
  }

  // from / reply_to
  const from = body['from'];
  if (!isObject(from) || from['email'] === undefined) errors.push(err(MSG.from, 'from'));
  else if (typeof from['email'] !== 'string' || !isValidEmailSyntax(from['email'])) errors.push(err(MSG.fromEmail, 'from.email'));
  const replyTo = body['reply_to'];
  if (replyTo !== undefined && (!isObject(replyTo) || typeof replyTo['email'] !== 'string' || !isValidEmailSyntax(replyTo['email']))) {
    errors.push(err(MSG.replyTo, 'reply_to.email'));
  }
  // Mail Send: reply_to_list "cannot be used if you are also using reply_to" (the two together: 400).
  if (replyTo !== undefined && body['reply_to_list'] !== undefined) {
    errors.push(err('The reply_to and reply_to_list fields cannot be used together.', 'reply_to_list'));
  }
  // Scheduled sends (the 72 hours and the batch's existence: scheduled-sends.ts).
  if (body['send_at'] !== undefined && !(typeof body['send_at'] === 'number' && Number.isInteger(body['send_at']))) {
    errors.push(err(`Invalid type. Expected: integer, given: ${typeName(body['send_at'])}.`, 'send_at'));
  }
  if (body['batch_id'] !== undefined && typeof body['batch_id'] !== 'string') {
    errors.push(err(`Invalid type. Expected: string, given: ${typeName(body['batch_id'])}.`, 'batch_id'));
  }

  // subject
  const subject = body['subject'];
  if (subject !== undefined && typeof subject !== 'string') errors.push(err(`Invalid type. Expected: string, given: ${typeName(subject)}.`, 'subject'));
  if (!hasTemplate && !(typeof subject === 'string' && subject.length > 0) && !everyPersonalizationHasSubject) {
    errors.push(err(MSG.subject, 'subject'));
  }

  // content
  const content = body['content'];
  if (content === undefined || (Array.isArray(content) && content.length === 0)) {
    if (!hasTemplate) errors.push(err(MSG.content, 'content'));
  } else if (!Array.isArray(content)) {
    errors.push(err(`Invalid type. Expected: array, given: ${typeName(content)}.`, 'content'));
  } else {
    const types: string[] = [];
    content.forEach((c: unknown, k) => {
      const t = isObject(c) ? c['type'] : undefined;
      const v = isObject(c) ? c['value'] : undefined;
      if (typeof t !== 'string' || t.length === 0) errors.push(err(MSG.contentType, `content.${k}.type`));
      else types.push(t.toLowerCase());
      if (typeof v !== 'string' || v.length === 0) errors.push(err(MSG.contentValue, `content.${k}.value`));
    });
    const plain = types.indexOf('text/plain');
    const html = types.indexOf('text/html');
    if (plain > 0 || (html >= 0 && plain < 0 && html > 0) || (plain >= 0 && html >= 0 && html !== plain + 1)) {
      errors.push(err(MSG.contentOrder, 'content'));
    }
  }

  // attachments
  const atts = body['attachments'];
  if (atts !== undefined) {
    if (!Array.isArray(atts)) {
      errors.push(err(`Invalid type. Expected: array, given: ${typeName(atts)}.`, 'attachments'));
    } else {
      atts.forEach((a: unknown, k) => {
        if (!isObject(a)) {
          errors.push(err(`Invalid type. Expected: object, given: ${typeName(a)}.`, `attachments.${k}`));
          return;
        }
        const c = a['content'];
        if (typeof c !== 'string' || !isBase64(c)) errors.push(err(MSG.attachmentContent, `attachments.${k}.content`));
        const fn = a['filename'];
        if (typeof fn !== 'string' || fn.length === 0) errors.push(err(MSG.attachmentFilename, `attachments.${k}.filename`));
        const t = a['type'];
        if (t !== undefined && (typeof t !== 'string' || /[;\r\n]/.test(t))) {
          errors.push(
            err(
              "The attachment type cannot contain ';', or CRLF characters. The attachment type must be at least one character in length.",
              `attachments.${k}.type`,
            ),
          );
        }
      });
    }
  }

  // categories
  const categories = body['categories'];
  if (categories !== undefined) {
    if (!Array.isArray(categories)) errors.push(err(`Invalid type. Expected: array, given: ${typeName(categories)}.`, 'categories'));
    else {
      if (categories.length > 10) errors.push(err('Too many categories. Please limit to 10 categories per request.', 'categories'));
      if (new Set(categories).size !== categories.length) errors.push(err('The categories must be unique.', 'categories'));
      categories.forEach((c: unknown, k) => {
        if (typeof c !== 'string' || c.length > 255) errors.push(err('A category cannot exceed 255 characters.', `categories.${k}`));
      });
    }
  }

  // custom_args
  if (body['custom_args'] !== undefined) checkCustomArgs(body['custom_args'], 'custom_args', errors);
  const argsSize = Buffer.byteLength(JSON.stringify(body['custom_args'] ?? {}));
  if (argsSize > 10_000) errors.push(err(MSG.customArgsSize, 'custom_args'));

  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, mail: body as ValidMail };
}

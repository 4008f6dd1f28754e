import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUNCE_DOMAINS, isDeliverableAddress, isValidEmailSyntax, parseActivityQuery, QuerySyntaxError, type ActivityRecord } from '../src/index.ts';

describe('address rule', () => {
  it('accepts ordinary addresses and rejects malformed ones', () => {
    for (const ok of ['rahim@acme.example', 'first.last+slip@mail.acme.com.bd', "o'neil@x.io", 'a@xn--p1ai.xn--p1ai'])
      expect(isValidEmailSyntax(ok), ok).toBe(true);
    for (const bad of [
      '',
      'rahim',
      '@acme.example',
      'rahim@',
      'a b@x.com',
      'a..b@x.com',
      '.a@x.com',
      'a.@x.com',
      'a@localhost',
      'a@1.2.3.4',
      'a@-x.com',
      'a@x..com',
      'a@@x.com',
      `${'a'.repeat(65)}@x.com`,
    ]) {
      expect(isValidEmailSyntax(bad), bad).toBe(false);
    }
  });
  it('bounces the unreachable domain and its subdomains, case-insensitively', () => {
    const rule = { bounceDomains: DEFAULT_BOUNCE_DOMAINS, bounceAddresses: ['bounce@acme.example'] };
    expect(isDeliverableAddress('x@invalid.example', rule)).toBe(false);
    expect(isDeliverableAddress('x@HR.Invalid.Example', rule)).toBe(false);
    expect(isDeliverableAddress('Bounce@acme.example', rule)).toBe(false);
    expect(isDeliverableAddress('x@notinvalid.example', rule)).toBe(true);
  });
});

describe('activity query', () => {
  const record: ActivityRecord = {
    from_email: 'p@beton.example',
    msg_id: 'abc.filter.0',
    subject: 'Slip',
    to_email: 'rahim@acme.example',
    status: 'delivered',
    opens_count: 0,
    clicks_count: 0,
    last_event_time: '2026-11-01T02:00:00Z',
  };
  const t = { record, uniqueArgs: { idempotency_key: 'slip:2026-11:emp-1', company: 'acme' } };
  it('evaluates unique_args, fields, LIKE, AND/OR/NOT and parentheses', () => {
    expect(parseActivityQuery(`unique_args['idempotency_key']="slip:2026-11:emp-1"`)(t)).toBe(true);
    expect(parseActivityQuery(`unique_args["idempotency_key"]="slip:2026-11:emp-2"`)(t)).toBe(false);
    expect(parseActivityQuery(`msg_id LIKE "abc.%" and to_email="rahim@acme.example"`)(t)).toBe(true);
    expect(parseActivityQuery(`status="bounced" OR (subject='Slip' AND NOT unique_args['company']!="acme")`)(t)).toBe(true);
    expect(parseActivityQuery(`unique_args['missing'] NOT LIKE "x%"`)(t)).toBe(true);
  });
  it('rejects what it does not understand', () => {
    for (const q of ['', 'colour="red"', 'to_email', 'to_email = ', 'to_email="a" AND', `unique_args[name]="x"`, 'to_email="unterminated']) {
      expect(() => parseActivityQuery(q), q).toThrow(QuerySyntaxError);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classifyError, coerceError, errorFromHttpStatus, PermanentError, retryAfterFromHeaders, TransientError } from '../src/errors.ts';

const withCode = (code: string) => Object.assign(new Error(code), { code });

describe('error classification (SPEC R6)', () => {
  it.each([
    [errorFromHttpStatus(503, 'down'), 'transient', 'provider_unavailable'],
    [errorFromHttpStatus(500, 'oops'), 'transient', 'provider_unavailable'],
    [errorFromHttpStatus(429, 'slow down', { retryAfterMs: 3000 }), 'transient', 'rate_limited'],
    [errorFromHttpStatus(408, 'timeout'), 'transient', 'timeout'],
    [errorFromHttpStatus(400, 'bad address', { code: 'invalid_recipient' }), 'permanent', 'invalid_recipient'],
    [errorFromHttpStatus(401, 'bad key'), 'permanent', 'rejected'],
    [errorFromHttpStatus(413, 'too large'), 'permanent', 'rejected'],
    [withCode('ECONNRESET'), 'transient', 'connection_reset'],
    [withCode('ETIMEDOUT'), 'transient', 'timeout'],
    [withCode('ECONNREFUSED'), 'transient', 'provider_unavailable'],
    [Object.assign(new Error('aborted'), { name: 'AbortError' }), 'transient', 'timeout'],
    [Object.assign(new Error('sendgrid'), { code: 400, response: { headers: {} } }), 'permanent', 'rejected'],
    [Object.assign(new Error('sendgrid'), { code: 503 }), 'transient', 'provider_unavailable'],
    [new PermanentError('invalid_recipient', 'no such user'), 'permanent', 'invalid_recipient'],
    [new TransientError('timeout', 'slow'), 'transient', 'timeout'],
    [new Error('something else'), 'transient', 'unexpected'],
    ['a string was thrown', 'transient', 'unexpected'],
  ])('%s → %s / %s', (thrown, kind, code) => {
    const c = classifyError(thrown);
    expect(c.kind).toBe(kind);
    expect(c.code).toBe(code);
  });

  it('treats payload validation as permanent invalid_payload', () => {
    const result = z.object({ a: z.number() }).safeParse({ a: 'x' });
    expect(classifyError(result.error).kind).toBe('permanent');
    expect(classifyError(result.error).code).toBe('invalid_payload');
  });

  it('carries the rate-limit reset of a 429 as the minimum wait', () => {
    const now = Date.parse('2026-12-01T02:14:00Z');
    expect(retryAfterFromHeaders({ 'Retry-After': '3' }, now)).toBe(3000);
    expect(retryAfterFromHeaders({ 'x-ratelimit-reset': String(now / 1000 + 2) }, now)).toBe(2000);
    // A reset this clock already reached (read at the end of its second): to the next whole second.
    expect(retryAfterFromHeaders({ 'x-ratelimit-reset': String(now / 1000) }, now + 997)).toBe(3);
    expect(retryAfterFromHeaders({ 'x-ratelimit-reset': String(now / 1000) }, now)).toBe(1000);
    expect(retryAfterFromHeaders({ 'x-ratelimit-reset': String(now / 1000 - 1) }, now + 250)).toBe(750);
    const e = Object.assign(new Error('Too Many Requests'), { code: 429, response: { headers: { 'retry-after': '5' } } });
    expect(classifyError(e).retryAfterMs).toBe(5000);
  });

  it('coerces anything thrown to an Error once', () => {
    expect(coerceError({ a: 1 }).message).toContain('{"a":1}');
    const e = new Error('x');
    expect(coerceError(e)).toBe(e);
  });
});

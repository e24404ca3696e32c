import { describe, expect, it } from '@jest/globals';
import { formatSmtpReply, smtpReply, smtpReplyText } from '@postline/platform/pure';
import { credentialsVerdict, RELAY_REPLIES, submissionReply, type GatewayAnswer } from './relay-replies.ts';

const answered = (status: number, body: unknown): GatewayAnswer => ({
  kind: 'answered',
  status,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
const error = (statusCode: number, name: string, message: string) =>
  answered(statusCode, { statusCode, name, message });

describe('credentialsVerdict', () => {
  it('accepts a full or sending access key the gateway vouched for', () => {
    expect(credentialsVerdict(answered(200, { object: 'relay_credentials', permission: 'full_access' }))).toEqual({
      kind: 'accepted',
      permission: 'full_access',
    });
    expect(credentialsVerdict(answered(200, { object: 'relay_credentials', permission: 'sending_access' }))).toEqual({
      kind: 'accepted',
      permission: 'sending_access',
    });
  });

  it('refuses a key the gateway refused (401 missing, 403 invalid, revoked, expired or a disabled team)', () => {
    expect(credentialsVerdict(error(401, 'missing_api_key', 'Missing API key'))).toEqual({ kind: 'refused' });
    expect(credentialsVerdict(error(403, 'invalid_api_key', 'API key is invalid'))).toEqual({ kind: 'refused' });
  });

  it('is unavailable, never accepted, when the gateway failed or answered something else', () => {
    expect(credentialsVerdict({ kind: 'failed', reason: 'ECONNREFUSED' })).toEqual({ kind: 'unavailable' });
    expect(credentialsVerdict(error(503, 'service_unavailable', 'down'))).toEqual({ kind: 'unavailable' });
    expect(credentialsVerdict(error(404, 'not_found', 'Route not found'))).toEqual({ kind: 'unavailable' });
    expect(credentialsVerdict(answered(200, 'not json'))).toEqual({ kind: 'unavailable' });
    expect(credentialsVerdict(answered(200, { object: 'relay_credentials', permission: 'admin' }))).toEqual({
      kind: 'unavailable',
    });
  });
});

describe('submissionReply', () => {
  it('answers 250 with the email id only for a 200', () => {
    expect(submissionReply(answered(200, { id: '0199a1b2-0000-7000-8000-000000000001' }))).toEqual({
      code: 250,
      enhanced: '2.0.0',
      text: 'Ok: queued as 0199a1b2-0000-7000-8000-000000000001',
      outcome: 'accepted',
      closeAfter: false,
    });
  });

  it('maps the contract errors to their replies, quoting the gateway message', () => {
    const reply = (answer: GatewayAnswer) => {
      const submission = submissionReply(answer);
      return `${formatSmtpReply(submission)} (${submission.outcome})`;
    };
    expect(reply(error(403, 'validation_error', 'The acme.test domain is not verified.'))).toBe(
      '550 5.7.1 The acme.test domain is not verified. (rejected)',
    );
    expect(reply(error(422, 'missing_required_field', 'Missing `from` field.'))).toBe(
      '550 5.6.0 Missing `from` field. (rejected)',
    );
    expect(reply(error(400, 'invalid_idempotency_key', 'Too long.'))).toBe('550 5.6.0 Too long. (rejected)');
    expect(reply(error(413, 'validation_error', 'Too large.'))).toBe('552 5.3.4 Too large. (rejected)');
    expect(reply(error(429, 'rate_limit_exceeded', 'Too many requests.'))).toBe(
      '421 4.7.0 Too many requests. (deferred)',
    );
    expect(reply(error(409, 'concurrent_idempotent_requests', 'In progress.'))).toBe(
      '451 4.3.0 In progress. (deferred)',
    );
    expect(reply(error(409, 'invalid_idempotent_request', 'Key reused.'))).toBe('550 5.7.0 Key reused. (rejected)');
    expect(reply(error(401, 'missing_api_key', 'Missing.'))).toBe(
      '535 5.7.8 Authentication credentials invalid (rejected)',
    );
    expect(reply(error(403, 'invalid_api_key', 'Invalid.'))).toBe(
      '535 5.7.8 Authentication credentials invalid (rejected)',
    );
  });

  it('ends the session after a rate limit (421 closes the channel)', () => {
    expect(submissionReply(error(429, 'rate_limit_exceeded', 'x')).closeAfter).toBe(true);
    expect(submissionReply(error(422, 'validation_error', 'x')).closeAfter).toBe(false);
  });

  it('defers (451) a 5xx, an unknown answer, a bad body or no answer: the client keeps the message', () => {
    for (const answer of [
      error(500, 'internal_server_error', 'boom'),
      error(503, 'service_unavailable', 'down'),
      error(404, 'not_found', 'Route not found'),
      answered(502, '<html>bad gateway</html>'),
      { kind: 'failed', reason: 'UND_ERR_HEADERS_TIMEOUT' } as const,
    ]) {
      expect(submissionReply(answer)).toMatchObject({ code: 451, outcome: 'deferred' });
      expect(submissionReply(answer).enhanced).toBe('4.3.0');
    }
  });

  it('keeps a quoted gateway message on one short ASCII line', () => {
    const reply = submissionReply(
      error(422, 'validation_error', `line one\r\n250 fake\u0000 ${'é'.repeat(2)}${'x'.repeat(600)}`),
    );
    const text = smtpReplyText(reply);
    expect(text).not.toMatch(/[^\x20-\x7e]/);
    expect(text.length).toBeLessThanOrEqual(310);
    expect(text.startsWith('5.6.0 line one 250 fake')).toBe(true);
  });
});

describe('RELAY_REPLIES', () => {
  it("gives every reply an enhanced code of the reply code's class (the platform's policy)", () => {
    for (const entry of Object.values(RELAY_REPLIES)) {
      const reply = typeof entry === 'function' ? entry('a@b.test' as never, 1 as never) : entry;
      expect(() => smtpReply(reply.code, reply.enhanced, reply.text)).not.toThrow();
    }
  });
});

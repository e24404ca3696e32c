import { describe, expect, it } from '@jest/globals';
import { auditActionOf } from './audit.ts';

describe('auditActionOf', () => {
  it('names creations, updates, deletions and named actions, with their target', () => {
    expect(auditActionOf('POST', '/api-keys', 'k1')).toEqual({
      action: 'api-keys.created',
      target_type: 'api-keys',
      target_id: 'k1',
    });
    expect(auditActionOf('PATCH', '/api-keys/k1/', undefined)?.action).toBe('api-keys.updated');
    expect(auditActionOf('DELETE', '/webhooks/w1', undefined)).toMatchObject({
      action: 'webhooks.deleted',
      target_id: 'w1',
    });
    expect(auditActionOf('POST', '/domains/d1/verify', undefined)).toMatchObject({
      action: 'domains.verify',
      target_id: 'd1',
    });
    expect(auditActionOf('DELETE', '/contacts/c1/segments/s1', undefined)?.action).toBe('contacts.updated');
  });

  it('leaves reads, sending and unknown families out', () => {
    expect(auditActionOf('GET', '/api-keys', undefined)).toBeUndefined();
    expect(auditActionOf('POST', '/emails', 'e1')).toBeUndefined();
    expect(auditActionOf('POST', '/emails/batch', undefined)).toBeUndefined();
    expect(auditActionOf('POST', '/nothing', undefined)).toBeUndefined();
  });
});

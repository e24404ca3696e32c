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
    // Signup forms: who made, changed or deleted a key-less page that adds contacts.
    expect(auditActionOf('POST', '/forms', 'f1')).toMatchObject({ action: 'forms.created', target_id: 'f1' });
    expect(auditActionOf('PATCH', '/forms/f1', undefined)?.action).toBe('forms.updated');
  });

  it("names a broadcast's approval and rejection, and a change of the broadcast settings", () => {
    expect(auditActionOf('POST', '/broadcasts/b1/approve', { id: 'b1' })).toEqual({
      action: 'broadcasts.approve',
      target_type: 'broadcasts',
      target_id: 'b1',
    });
    expect(auditActionOf('POST', '/broadcasts/b1/reject', undefined)?.action).toBe('broadcasts.reject');
    expect(auditActionOf('PATCH', '/broadcasts/settings', undefined)).toEqual({
      action: 'broadcasts.settings_updated',
      target_type: 'broadcasts',
      target_id: null,
    });
    expect(auditActionOf('POST', '/reputation/resume', undefined)).toEqual({
      action: 'reputation.resumed',
      target_type: 'reputation',
      target_id: null,
    });
  });

  it('leaves reads, sending and unknown families out', () => {
    expect(auditActionOf('GET', '/api-keys', undefined)).toBeUndefined();
    expect(auditActionOf('POST', '/emails', 'e1')).toBeUndefined();
    expect(auditActionOf('POST', '/emails/batch', undefined)).toBeUndefined();
    expect(auditActionOf('POST', '/nothing', undefined)).toBeUndefined();
  });
});

// The integration tests' check of every API response against the OpenAPI document (libs/testing's fetch
// hook): what it lets through and what it stops.
import { describe, expect, it } from '@jest/globals';
import { checkApiResponse } from '@postline/testing';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });

const domain = {
  object: 'domain',
  id: '0b5c5e58-4f6e-4c3c-9a53-2f5a6a1b7c11',
  name: 'example.com',
  status: 'not_started',
  created_at: '2026-01-02 03:04:05.678+00',
  region: 'us-east-1',
  open_tracking: false,
  click_tracking: false,
  capabilities: { sending: 'enabled', receiving: 'disabled' },
  records: [],
  tls: 'opportunistic',
};

describe('the check of an API response against the OpenAPI document', () => {
  it('lets a documented success and a documented error through', async () => {
    expect(await checkApiResponse('GET', `/domains/${domain.id}`, json(200, domain))).toBeUndefined();
    expect(
      await checkApiResponse(
        'GET',
        '/domains/x',
        json(404, { statusCode: 404, name: 'not_found', message: 'Domain not found' }),
      ),
    ).toBeUndefined();
  });

  it('stops a field the document does not have, a missing field and a field of another type', async () => {
    expect(await checkApiResponse('GET', `/domains/${domain.id}`, json(200, { ...domain, extra: 1 }))).toMatch(
      /must NOT have additional properties.*extra/,
    );
    const { region: _region, ...withoutRegion } = domain;
    expect(await checkApiResponse('GET', `/domains/${domain.id}`, json(200, withoutRegion))).toMatch(
      /must have required property 'region'/,
    );
    expect(
      await checkApiResponse('GET', `/domains/${domain.id}`, json(200, { ...domain, open_tracking: 'no' })),
    ).toMatch(/\/open_tracking must be boolean/);
  });

  it('stops a status the operation does not document, and an error name the status does not', async () => {
    expect(await checkApiResponse('POST', '/contacts/c/segments/s', json(201, { id: 's' }))).toMatch(
      /a status POST \/contacts\/\{contact_id\}\/segments\/\{segment_id\} does not document/,
    );
    expect(
      await checkApiResponse('GET', '/domains/x', json(404, { statusCode: 404, name: 'invalid_region', message: '?' })),
    ).toMatch(/\/name must be equal to one of the allowed values/);
  });

  it('picks the literal route before a parameter, and ignores what the API does not serve', async () => {
    expect(
      await checkApiResponse(
        'POST',
        '/emails/batch',
        json(200, { data: [{ id: '0b5c5e58-4f6e-4c3c-9a53-2f5a6a1b7c11' }] }),
      ),
    ).toBeUndefined();
    expect(await checkApiResponse('GET', '/nowhere', json(404, { anything: true }))).toBeUndefined();
    expect(await checkApiResponse('PUT', '/domains', json(405, {}))).toBeUndefined();
  });
});

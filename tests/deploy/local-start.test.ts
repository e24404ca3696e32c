// `npm start` runs the six services on one host with one environment: the addresses by which they reach
// each other, and the public base URL of links, follow the ports that were set.
import { describe, expect, it } from '@jest/globals';
import { localEnv } from '../../scripts/services.ts';

describe('localEnv', () => {
  it('points the relay and public links at the default gateway port when nothing is set', () => {
    expect(localEnv({})).toMatchObject({
      API_GATEWAY_URL: 'http://127.0.0.1:3000',
      PUBLIC_BASE_URL: 'http://localhost:3000',
    });
  });

  it('follows API_PORT: the relay asks the gateway where it listens, and links point at it', () => {
    const env = localEnv({ API_PORT: '4000', DATABASE_URL: 'postgres://db/postline' });
    expect(env).toMatchObject({
      API_PORT: '4000',
      API_GATEWAY_URL: 'http://127.0.0.1:4000',
      PUBLIC_BASE_URL: 'http://localhost:4000',
      DATABASE_URL: 'postgres://db/postline',
    });
  });

  it('keeps addresses that were set themselves', () => {
    const env = localEnv({
      API_PORT: '4000',
      API_GATEWAY_URL: 'http://gateway.internal:3000',
      PUBLIC_BASE_URL: 'https://mail.example.com',
    });
    expect(env.API_GATEWAY_URL).toBe('http://gateway.internal:3000');
    expect(env.PUBLIC_BASE_URL).toBe('https://mail.example.com');
  });
});

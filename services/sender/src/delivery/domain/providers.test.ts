import { describe, expect, it } from '@jest/globals';
import { providerOfMx } from './providers.ts';

describe('providerOfMx', () => {
  it.each([
    ['gmail-smtp-in.l.google.com', 'gmail'],
    ['ASPMX.L.GOOGLE.COM.', 'gmail'],
    ['acme-com.mail.protection.outlook.com', 'microsoft'],
    ['hotmail-com.olc.protection.outlook.com', 'microsoft'],
    ['mta7.am0.yahoodns.net', 'yahoo'],
    ['mx01.mail.icloud.com', 'apple'],
    ['mx1.example.com', 'other'],
    ['google.com.evil.test', 'other'],
    ['notgoogle.com', 'other'],
  ])('%s is %s', (mx, provider) => {
    expect(providerOfMx(mx)).toBe(provider);
  });
});

import { describe, expect, it } from '@jest/globals';
import { checkEndpointUrl } from './url-policy.ts';

const strict = { allowPrivate: false };
const relaxed = { allowPrivate: true };

const messageOf = (raw: string, options = strict) => {
  const check = checkEndpointUrl(raw, options);
  return check.ok ? 'ok' : check.message;
};

const PRIVATE = 'The `endpoint` must not point to a private, loopback or reserved address.';
const NAME = 'The `endpoint` must use a public host name.';

describe('checkEndpointUrl', () => {
  it.each([
    'https://hooks.example.com/postline',
    'https://hooks.example.com:443/x?y=1',
    'https://hooks.example.com:8443/',
    'https://hooks.example.com./',
    'https://93.184.216.34/hook',
    'https://[2606:4700::1111]/hook',
    'https://bücher.example/hook',
  ])('accepts the public https endpoint %s', (raw) => {
    expect(messageOf(raw)).toBe('ok');
  });

  it('returns the normalised URL', () => {
    const check = checkEndpointUrl('HTTPS://Hooks.Example.COM:443/a', strict);
    expect(check.ok && check.url.href).toBe('https://hooks.example.com/a');
  });

  it.each(['not a url', '/relative/path', 'hooks.example.com/postline', ''])(
    'refuses %j, which is not a URL',
    (raw) => {
      expect(messageOf(raw)).toBe('The `endpoint` must be a valid URL.');
    },
  );

  it('refuses URLs longer than 2048 characters', () => {
    expect(messageOf(`https://hooks.example.com/${'a'.repeat(2048)}`)).toBe(
      'The `endpoint` must be at most 2048 characters.',
    );
  });

  it.each([
    'http://hooks.example.com/',
    'ftp://hooks.example.com/',
    'file:///etc/passwd',
    'gopher://hooks.example.com/',
    'ws://hooks.example.com/',
    'javascript:alert(1)',
  ])('refuses the scheme of %s', (raw) => {
    expect(messageOf(raw)).toBe('The `endpoint` must use https.');
  });

  it.each([
    'https://user:pass@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://:pass@hooks.example.com/',
  ])('refuses credentials in %s', (raw) => {
    expect(messageOf(raw)).toBe('The `endpoint` must not contain a username or password.');
  });

  it.each([
    'https://127.0.0.1/',
    'https://10.0.0.1/',
    'https://172.16.0.1/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/',
    'https://0.0.0.0/',
    'https://0/',
    'https://198.18.0.1/',
    'https://224.0.0.1/',
    'https://[::1]/',
    'https://[::]/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[64:ff9b::7f00:1]/',
    'https://[2002:7f00:1::]/',
    'https://[2001::1]/',
    // Spellings the URL parser turns into 127.0.0.1.
    'https://2130706433/',
    'https://0x7f000001/',
    'https://0x7f.1/',
    'https://0177.0.0.1/',
    'https://017700000001/',
    'https://127.1/',
    'https://１２７.０.０.１/',
  ])('refuses the internal address in %s', (raw) => {
    expect(messageOf(raw)).toBe(PRIVATE);
  });

  it.each([
    'https://localhost/',
    'https://LOCALHOST./',
    'https://%6c%6fcalhost/',
    'https://api.localhost/',
    'https://printer.local/',
    'https://metadata.google.internal/',
    'https://router.home.arpa/',
    'https://box.localdomain/',
    'https://intranet/',
    'https://intranet./',
  ])('refuses the internal name in %s', (raw) => {
    expect(messageOf(raw)).toBe(NAME);
  });

  it.each([
    'https://hooks.example.com:80/',
    'https://hooks.example.com:25/',
    'https://hooks.example.com:6379/',
    'https://93.184.216.34:22/',
  ])('refuses the port of %s', (raw) => {
    expect(messageOf(raw)).toBe('The `endpoint` must use port 443 or 8443.');
  });

  describe('with private targets allowed', () => {
    it.each([
      'http://127.0.0.1:8080/hook',
      'https://[::1]:9443/',
      'http://localhost:3000/',
      'http://receiver:8080/',
      'http://10.0.0.5/',
    ])('accepts %s', (raw) => {
      expect(messageOf(raw, relaxed)).toBe('ok');
    });

    it('still refuses other schemes and credentials', () => {
      expect(messageOf('file:///etc/passwd', relaxed)).toBe('The `endpoint` must use https.');
      expect(messageOf('http://u:p@127.0.0.1/', relaxed)).toBe(
        'The `endpoint` must not contain a username or password.',
      );
    });
  });
});

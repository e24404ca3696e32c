import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { positiveSerial, selfSignedCertificate } from './tls.ts';

describe('positiveSerial', () => {
  it('never starts with a zero byte nor one with its top bit set, whatever the random bytes', () => {
    for (const first of [0x00, 0x01, 0x7f, 0x80, 0xff]) {
      const serial = positiveSerial(Buffer.from([first, 0x00, 0x12]));
      const lead = Number.parseInt(serial.slice(0, 2), 16);
      expect(lead).toBeGreaterThan(0);
      expect(lead).toBeLessThan(0x80);
      expect(serial).toHaveLength(6);
    }
  });
});

describe('selfSignedCertificate', () => {
  it('is a certificate OpenSSL reads, for the host, with the serial it was given', () => {
    const { cert } = selfSignedCertificate('mx.example.test', new Date());
    const x509 = new X509Certificate(cert);
    expect(x509.subject).toBe('CN=mx.example.test');
    expect(x509.subjectAltName).toBe('DNS:mx.example.test');
    expect(Number.parseInt(x509.serialNumber.slice(0, 2), 16)).toBeLessThan(0x80);
  });
});

// Traffic shaping through the MTA: two mailbox providers, each a local MX reached under its real MX host
// name through the local DNS server; one starts answering `421 4.7.28` under load.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startDnsServer, startSinkMx, waitFor, type DnsServer, type SinkMx } from '@postline/testing';
import { createMta } from '../../src/delivery/smtp/mta.ts';
import { createMxResolver } from '../../src/delivery/smtp/mx.ts';
import { createShaper, shapingConfigOf, type Shaper } from '../../src/delivery/smtp/shaping.ts';
import type { SmtpTrace } from '../../src/delivery/smtp/transcript.ts';
import type { DeliveryRequest, Mta, RecipientOutcome } from '../../src/delivery/smtp/types.ts';

const GMAIL_MX = 'gmail-smtp-in.l.google.com';
const MICROSOFT_MX = 'shaping-test.mail.protection.outlook.com';
/** Messages the Gmail MX takes before it pushes back. */
const TAKEN_BEFORE_PUSHBACK = 4;

let dns: DnsServer;
let gmail: SinkMx;
let microsoft: SinkMx;
let mta: Mta;
let shaper: Shaper;
let pushingBack = true;

beforeAll(async () => {
  const port = await freePort();
  dns = await startDnsServer();
  gmail = await startSinkMx({
    host: '127.0.0.61',
    port,
    mailFrom: () =>
      pushingBack && gmail.messages.length >= TAKEN_BEFORE_PUSHBACK
        ? // Naming the sender of the message it refuses, as some providers' replies do.
          {
            code: 421,
            message: '4.7.28 <news@team-b.test> Our system has detected an unusual rate of unsolicited mail',
          }
        : undefined,
  });
  microsoft = await startSinkMx({ host: '127.0.0.62', port });
  dns.set('gmail.test', [{ type: 'MX', exchange: GMAIL_MX, priority: 5 }]);
  dns.set(GMAIL_MX, [{ type: 'A', address: gmail.host }]);
  dns.set('outlook.test', [{ type: 'MX', exchange: MICROSOFT_MX, priority: 0 }]);
  dns.set(MICROSOFT_MX, [{ type: 'A', address: microsoft.host }]);
  shaper = createShaper({
    config: shapingConfigOf({ pushback: { holdAfterPushbacks: 2, holdMs: 400 } }),
  });
  mta = createMta({
    // Answers kept (the default minute): the MTA tells a held delivery from the MX answer it already has.
    resolver: createMxResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, allowPrivate: true }),
    port,
    heloName: 'mta.postline.test',
    allowPrivate: true,
    connectTimeoutMs: 2000,
    greetingTimeoutMs: 2000,
    socketTimeoutMs: 3000,
    shaper,
  });
});

afterAll(async () => {
  await mta.close();
  await Promise.all([gmail.close(), microsoft.close(), dns.close()]);
});

const raw = Buffer.from('From: a@sender.test\r\nSubject: hi\r\nMessage-ID: <1@sender.test>\r\n\r\nhello\r\n');
const request = (domain: string, local: string): DeliveryRequest => ({
  domain,
  envelopeFrom: 'b.0.x.aaaaaaaaaa@send.sender.test',
  recipients: [`${local}@${domain}`],
  raw,
  requireTls: false,
});

describe('traffic shaping per mailbox provider', () => {
  it('holds only the provider that pushes back, and delivers its mail once it recovers, each message once', async () => {
    const toGmail = Array.from({ length: 12 }, (_, i) => `g${i}`);
    const toMicrosoft = Array.from({ length: 12 }, (_, i) => `m${i}`);

    // One at a time per provider, as a steady stream would arrive.
    const deliverAll = async (domain: string, locals: string[]) => {
      const outcomes: RecipientOutcome[] = [];
      for (const local of locals) outcomes.push(...(await mta.deliver(request(domain, local))));
      return outcomes;
    };
    const [gmailOutcomes, microsoftOutcomes] = await Promise.all([
      deliverAll('gmail.test', toGmail),
      deliverAll('outlook.test', toMicrosoft),
    ]);

    // Microsoft took everything; Gmail took some, pushed back twice, and the rest was deferred by the hold
    // without a connection, naming it and when it ends.
    expect(microsoftOutcomes.map((o) => o.status)).toEqual(toMicrosoft.map(() => 'delivered'));
    expect(microsoft.messages).toHaveLength(12);
    expect(gmailOutcomes.slice(0, TAKEN_BEFORE_PUSHBACK).every((o) => o.status === 'delivered')).toBe(true);
    const deferred = gmailOutcomes.slice(TAKEN_BEFORE_PUSHBACK);
    expect(deferred.slice(0, 2)).toEqual([
      expect.objectContaining({ status: 'deferred', code: 421, enhanced: '4.7.28' }),
      expect.objectContaining({ status: 'deferred', code: 421, enhanced: '4.7.28' }),
    ]);
    const held = deferred.slice(2);
    // The reply that held the provider may have been another team's: the deferrals name no mailbox of it.
    for (const outcome of held) {
      expect(outcome.status === 'deferred' && outcome.response).toContain('421 4.7.28 <…> Our system has detected');
      expect(JSON.stringify(outcome)).not.toContain('team-b.test');
    }
    for (const outcome of held)
      expect(outcome).toEqual(
        expect.objectContaining({
          status: 'deferred',
          code: 451,
          enhanced: '4.7.0',
          mx: null,
          response: expect.stringContaining('421 4.7.28'),
          throttle: { provider: 'gmail', until: expect.any(Date) },
        }),
      );
    const connectionsWhileHeld = gmail.connections();
    expect(shaper.states().find((s) => s.key === 'gmail')).toMatchObject({ rate: 750, heldUntil: expect.any(Date) });
    expect(shaper.states().find((s) => s.key === 'microsoft')).toMatchObject({ rate: 1200, heldUntil: null });

    // Retried before the hold ends: deferred again, and the MX is not dialled. The MTA tells so before any
    // message is made for it, with the same outcome; the other provider is not held.
    const { raw: _, ...unmade } = request('gmail.test', 'g-early');
    const trace: SmtpTrace[] = [];
    const told = await mta.held({ ...unmade, trace });
    expect(told).toEqual([
      expect.objectContaining({
        status: 'deferred',
        code: 451,
        mx: null,
        throttle: expect.objectContaining({ provider: 'gmail' }),
      }),
    ]);
    expect(trace[0]?.lines).toEqual([expect.stringMatching(/^\* deliveries to gmail are held until /)]);
    expect(await mta.held(request('outlook.test', 'm-early'))).toBeUndefined();
    const early = await mta.deliver(request('gmail.test', 'g-early'));
    expect(early).toEqual(told);
    expect(gmail.connections()).toBe(connectionsWhileHeld);

    // The provider recovers; once the hold ends, the deferred mail goes through, at a rate raised by each success.
    pushingBack = false;
    await waitFor('the hold on gmail to end', () => shaper.states().find((s) => s.key === 'gmail')?.heldUntil === null);
    const retried = toGmail.slice(TAKEN_BEFORE_PUSHBACK);
    const again = (await Promise.all(retried.map((local) => mta.deliver(request('gmail.test', local))))).flat();
    expect(again.map((o) => o.status)).toEqual(retried.map(() => 'delivered'));
    const received = gmail.messages.flatMap((m) => m.to).sort();
    expect(received).toEqual(toGmail.map((local) => `${local}@gmail.test`).sort());
    expect(shaper.states().find((s) => s.key === 'gmail')!.rate).toBeGreaterThan(750);
  });
});

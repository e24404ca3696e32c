// What mime-tree.ts writes through nodemailer's internals. buildMime against nodemailer's own build(): the
// same bytes for the same compiled tree, over a seeded corpus of messages with the shapes that change the
// output (encodings, line breaks, whitespace at line ends, long lines, non-ASCII, attachments, inline parts,
// custom headers). And the exact bytes of one message, so that an upgrade of nodemailer that changes what
// its internal modules produce fails here, not at a recipient's server.
import { Readable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import MailComposer, { type MailComposerOptions } from 'nodemailer/lib/mail-composer';
import { toCrlf } from './compose-email.ts';
import { buildMime, extensionOf, mimeTypeOf } from './mime-tree.ts';

/** A small seeded generator (mulberry32), so a failure names a corpus entry that can be rerun. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'word',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '=',
  '.',
  'é',
  'Grüße',
  '中文',
  '😀',
  '<b>bold</b>',
  'x'.repeat(90),
  'y'.repeat(1200),
  '=3D',
  '--',
  ' \n',
  '\t\r\n',
];

function text(next: () => number, pieces: number): string {
  let out = '';
  for (let i = 0; i < pieces; i++) out += PIECES[Math.floor(next() * PIECES.length)];
  return out;
}

function pick<T>(next: () => number, values: readonly T[]): T {
  return values[Math.floor(next() * values.length)] as T;
}

function bytes(next: () => number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(next() * 256);
  return out;
}

/** One message's options, as composeMessage passes them to MailComposer, with varied content. */
function message(seed: number): MailComposerOptions {
  const next = random(seed);
  const body = () => pick(next, [undefined, '', text(next, 1), text(next, 8), text(next, 40)]);
  const attachments = Array.from({ length: Math.floor(next() * 3) }, (_, i) =>
    pick(next, [
      {
        filename: `file-${i}.bin`,
        content: bytes(next, Math.floor(next() * 300)),
        contentDisposition: 'attachment' as const,
      },
      {
        filename: `notes-${i}.txt`,
        content: text(next, 10),
        contentType: 'text/plain',
        contentDisposition: 'attachment' as const,
      },
      {
        filename: `logo-${i}.png`,
        content: bytes(next, 120),
        cid: `logo${i}@acme.test`,
        contentDisposition: 'inline' as const,
      },
      {
        filename: `invite-${i}.ics`,
        content: Buffer.from(text(next, 12)),
        contentType: 'text/calendar; method=REQUEST',
        contentDisposition: 'attachment' as const,
      },
      {
        filename: `big-${i}.pdf`,
        content: bytes(next, 8_000 + Math.floor(next() * 1000)),
        contentDisposition: 'attachment' as const,
      },
      {
        filename: `report-${i}.csv`,
        content: text(next, 60),
        contentType: 'text/csv',
        contentDisposition: 'attachment' as const,
      },
    ]),
  );
  const html = body();
  const plain = body();
  return {
    from: { name: pick(next, ['', 'Acme', 'Acme, Inc.', 'Ærø Støre', '中文 名']), address: 'orders@acme.test' },
    to: [{ name: pick(next, ['', 'Jane', 'Jöns "J" Doe']), address: 'jane@example.com' }],
    cc: next() < 0.5 ? [] : [{ name: '', address: 'bob@example.com' }],
    replyTo: [],
    subject: pick(next, ['', 'Your order', 'Grüße aus Köln', text(next, 6).replace(/[\r\n]/g, ' ')]),
    messageId: `<${seed}.corpus@acme.test>`,
    date: new Date('2026-11-18T10:00:00.000Z'),
    ...(html === undefined ? {} : { html }),
    ...(plain === undefined ? {} : { text: plain }),
    headers: next() < 0.5 ? [] : [{ key: 'X-Campaign', value: text(next, 4).replace(/[\r\n]/g, ' ') || 'spring' }],
    attachments,
    disableFileAccess: true,
    disableUrlAccess: true,
    ...(next() < 0.5 ? { newline: 'win' } : {}),
  };
}

describe('buildMime', () => {
  it("writes the same bytes as nodemailer's build() for 400 varied messages", async () => {
    let multipart = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const options = message(seed);
      const node = new MailComposer(options).compile();
      const built = buildMime(node);
      expect(built).toBeDefined();
      const streamed = await node.build();
      // build() ends with its newline stage when `newline` is set; buildMime leaves line endings alone.
      const normalise = (raw: Buffer) => (options.newline ? toCrlf(raw) : raw).toString('latin1');
      const [ours, theirs] = [normalise(built!), normalise(streamed)];
      if (ours !== theirs) {
        let at = 0;
        while (ours[at] === theirs[at]) at++;
        const around = (s: string) => JSON.stringify(s.slice(Math.max(0, at - 60), at + 60));
        throw new Error(
          `corpus message ${seed} differs at byte ${at}: ${around(ours)} against build()'s ${around(theirs)}`,
        );
      }
      if (/^Content-Type: multipart\//m.test(streamed.toString('latin1'))) multipart++;
    }
    // The corpus reaches the nested shapes (alternative, related, mixed), not only single parts.
    expect(multipart).toBeGreaterThan(100);
  });

  it('leaves a tree with a streamed part to build()', () => {
    const node = new MailComposer({
      from: 'a@acme.test',
      to: 'b@example.com',
      text: Readable.from(['streamed']),
    }).compile();
    expect(buildMime(node)).toBeUndefined();
  });
});

describe("the bytes of nodemailer's internals", () => {
  const BASE = '0123456789abcdef0123456789abcdef';

  it('writes a pinned message: header names, quoted-printable and base64 parts, boundaries', () => {
    const node = new MailComposer({
      from: { name: 'Ærø Støre', address: 'orders@acme.test' },
      to: [{ name: 'Jane', address: 'jane@example.com' }],
      cc: [],
      replyTo: [],
      subject: 'Grüße aus Köln',
      messageId: '<pin.1@acme.test>',
      date: new Date('2026-11-18T10:00:00.000Z'),
      text: `Grüße, Jane!\nA line that goes on and on ${'and on '.repeat(12)}until it must be wrapped.\ntrailing space \nend`,
      html: '<p>Grüße, <b>Jane</b>! <img src="cid:logo@acme.test"></p>',
      // A lower-case name: nodemailer writes it normalised (memoised by mime-tree.ts).
      headers: [{ key: 'x-campaign-id', value: 'spring-2026' }],
      attachments: [
        {
          filename: 'logo.png',
          content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]),
          cid: 'logo@acme.test',
          contentDisposition: 'inline',
        },
        { filename: 'report.pdf', content: Buffer.from('%PDF-1.4 pinned'), contentDisposition: 'attachment' },
        {
          filename: 'data.bin',
          content: Buffer.from(Array.from({ length: 120 }, (_, i) => i * 2)),
          contentDisposition: 'attachment',
        },
        { filename: 'notes.txt', content: 'été\r\nok', contentType: 'text/plain', contentDisposition: 'attachment' },
      ],
      // Fixed, so that the boundaries are.
      baseBoundary: BASE,
      disableFileAccess: true,
      disableUrlAccess: true,
      newline: 'win',
    }).compile();

    // Line breaks inside the text part stay bare LF here: composeMessage's toCrlf makes them CRLF.
    const expected = [
      'X-Campaign-ID: spring-2026',
      'From: =?UTF-8?Q?=C3=86r=C3=B8_St=C3=B8re?= <orders@acme.test>',
      'To: Jane <jane@example.com>',
      'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?=',
      'Message-ID: <pin.1@acme.test>',
      'Date: Wed, 18 Nov 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed;',
      ` boundary="--_NmP-${BASE}-Part_1"`,
      '',
      `----_NmP-${BASE}-Part_1`,
      'Content-Type: multipart/alternative;',
      ` boundary="--_NmP-${BASE}-Part_2"`,
      '',
      `----_NmP-${BASE}-Part_2`,
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'Gr=C3=BC=C3=9Fe, Jane!\nA line that goes on and on and on and on and on and =',
      'on and on and on and on and on and on and on and on and on until it must be=',
      ' wrapped.\ntrailing space=20\nend',
      `----_NmP-${BASE}-Part_2`,
      'Content-Type: multipart/related; type="text/html";',
      ` boundary="--_NmP-${BASE}-Part_4"`,
      '',
      `----_NmP-${BASE}-Part_4`,
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<p>Gr=C3=BC=C3=9Fe, <b>Jane</b>! <img src=3D"cid:logo@acme.test"></p>',
      `----_NmP-${BASE}-Part_4`,
      'Content-Type: image/png; name=logo.png',
      'Content-ID: <logo@acme.test>',
      'Content-Transfer-Encoding: base64',
      'Content-Disposition: inline; filename=logo.png',
      '',
      'iVBORwABAv8=',
      `----_NmP-${BASE}-Part_4--`,
      '',
      `----_NmP-${BASE}-Part_2--`,
      '',
      `----_NmP-${BASE}-Part_1`,
      'Content-Type: application/pdf; name=report.pdf',
      'Content-Transfer-Encoding: base64',
      'Content-Disposition: attachment; filename=report.pdf',
      '',
      'JVBERi0xLjQgcGlubmVk',
      `----_NmP-${BASE}-Part_1`,
      'Content-Type: application/octet-stream; name=data.bin',
      'Content-Transfer-Encoding: base64',
      'Content-Disposition: attachment; filename=data.bin',
      '',
      'AAIEBggKDA4QEhQWGBocHiAiJCYoKiwuMDI0Njg6PD5AQkRGSEpMTlBSVFZYWlxeYGJkZmhqbG5w',
      'cnR2eHp8foCChIaIioyOkJKUlpianJ6goqSmqKqsrrCytLa4ury+wMLExsjKzM7Q0tTW2Nrc3uDi',
      '5Obo6uzu',
      `----_NmP-${BASE}-Part_1`,
      'Content-Type: text/plain; charset=utf-8; name=notes.txt',
      'Content-Transfer-Encoding: base64',
      'Content-Disposition: attachment; filename=notes.txt',
      '',
      'w6l0w6kNCm9r',
      `----_NmP-${BASE}-Part_1--`,
      '',
    ].join('\r\n');
    expect(buildMime(node)?.toString('latin1')).toBe(expected);
  });

  it("guesses content types and extensions from nodemailer's table", () => {
    expect([mimeTypeOf('report.pdf'), mimeTypeOf('invite.ics'), mimeTypeOf('x.unknownext')]).toEqual([
      'application/pdf',
      'text/calendar',
      'application/octet-stream',
    ]);
    expect([extensionOf('application/pdf'), extensionOf('image/svg+xml'), extensionOf('text/calendar')]).toEqual([
      'pdf',
      'svg',
      'ics',
    ]);
  });
});

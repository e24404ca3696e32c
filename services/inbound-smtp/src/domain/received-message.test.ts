import { describe, expect, it } from '@jest/globals';
import {
  bestEffortMessage,
  decodeEncodedWords,
  headerMap,
  receivedFields,
  type ParsedMessage,
} from './received-message.ts';

describe('headerMap', () => {
  it('gives lower-case names, unfolded and decoded values, the first of a repeated header', () => {
    const lines = [
      { key: 'received', line: 'Received: from a.test\r\n by b.test' },
      { key: 'received', line: 'Received: from c.test' },
      { key: 'subject', line: 'Subject: =?UTF-8?B?Q2Egdm8=?=\r\n =?UTF-8?Q?_=C3=A7a?=' },
      { key: 'from', line: Buffer.from('From: Renée <renée@example.com>').toString('latin1') },
      { key: 'x-empty', line: 'X-Empty:' },
    ];
    expect(headerMap(lines)).toEqual({
      received: 'from a.test by b.test',
      subject: 'Ca vo ça',
      from: 'Renée <renée@example.com>',
      'x-empty': '',
    });
  });

  it('leaves an encoded word in an unknown charset as it is', () => {
    expect(decodeEncodedWords('=?x-unknown-charset?B?aGk=?= there')).toBe('=?x-unknown-charset?B?aGk=?= there');
    expect(decodeEncodedWords('=?iso-8859-1?Q?caf=E9?=')).toBe('café');
  });
});

describe('receivedFields', () => {
  const parsed: ParsedMessage = {
    headerLines: [],
    from: [{ address: 'a@x.test', name: 'A' }],
    to: [
      { address: 'b@y.test', name: '' },
      { address: '', name: 'undisclosed' },
    ],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hi',
    messageId: null,
    html: null,
    text: 'hi',
    attachments: [],
    error: null,
  };

  it('keeps bare addresses and makes a Message-ID when the message has none', () => {
    expect(receivedFields(parsed, '<id@mx.test>')).toMatchObject({
      from: 'a@x.test',
      to: ['b@y.test'],
      messageId: '<id@mx.test>',
    });
    expect(receivedFields({ ...parsed, messageId: '<m@x.test>' }, '<id@mx.test>').messageId).toBe('<m@x.test>');
  });
});

describe('bestEffortMessage', () => {
  it('reads the header block of a message the parser gave up on', () => {
    const raw = Buffer.from(
      'Subject: broken\r\nFrom: "Eve" <eve@x.test>\r\nTo: a@y.test, b@y.test\r\nMessage-ID: <m1@x.test>\r\n\r\n\x00\x01',
    );
    expect(bestEffortMessage(raw, 'boom')).toMatchObject({
      subject: 'broken',
      from: [{ address: 'eve@x.test' }],
      to: [{ address: 'a@y.test' }],
      messageId: '<m1@x.test>',
      html: null,
      text: null,
      error: 'boom',
    });
  });

  it('gives empty fields for bytes without any header', () => {
    expect(bestEffortMessage(Buffer.from([0, 1, 2, 255]), 'boom')).toMatchObject({
      subject: '',
      from: [],
      messageId: null,
      headerLines: [],
    });
  });
});

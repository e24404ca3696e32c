import { describe, expect, it } from '@jest/globals';
import { contactForms, topicOptOuts, withoutOptOuts, type TopicSubscriptions } from './topic-sends.ts';

const topic = (
  defaultSubscription: 'opt_in' | 'opt_out',
  choices: [string, 'opt_in' | 'opt_out'][],
): TopicSubscriptions => ({
  id: '0195f0a0-0000-7000-8000-000000000001',
  name: 'News',
  defaultSubscription,
  choices: new Map(choices),
});

describe('topicOptOuts', () => {
  it('keeps the email from explicit opt-outs under an opt-in topic, naming the topic', () => {
    const optOuts = topicOptOuts(
      topic('opt_in', [
        ['a@x.com', 'opt_out'],
        ['b@x.com', 'opt_in'],
      ]),
      ['a@x.com', 'b@x.com', 'c@x.com'],
    );
    expect(optOuts).toEqual([
      { position: 0, address: 'a@x.com', reason: expect.stringContaining('opted out of the topic "News"') },
    ]);
  });

  it('keeps the email from everyone without an explicit opt-in under an opt-out topic', () => {
    const optOuts = topicOptOuts(topic('opt_out', [['b@x.com', 'opt_in']]), ['a@x.com', 'b@x.com']);
    expect(optOuts.map((optOut) => optOut.address)).toEqual(['a@x.com']);
    expect(optOuts[0]!.reason).toMatch(/has not opted in .* opt-out by default/);
  });

  it('keeps nobody without a topic', () => {
    expect(topicOptOuts(undefined, ['a@x.com'])).toEqual([]);
  });
});

describe('withoutOptOuts and contactForms', () => {
  it('drops the recipients at the opted-out positions', () => {
    const recipients = [{ position: 0 }, { position: 1 }, { position: 2 }];
    expect(withoutOptOuts(recipients, [{ position: 1, address: 'b@x.com', reason: '' }])).toEqual([
      { position: 0 },
      { position: 2 },
    ]);
  });

  it('asks for an IDN address both in punycode and in Unicode', () => {
    expect(contactForms('a@xn--bcher-kva.example')).toEqual(['a@xn--bcher-kva.example', 'a@bücher.example']);
    expect(contactForms('a@example.com')).toEqual(['a@example.com']);
  });
});

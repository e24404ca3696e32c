import { describe, expect, it } from '@jest/globals';
import { consumerQueueNames, exchangeNames, topicMatches } from './topology.ts';

describe('topicMatches', () => {
  it('matches like a RabbitMQ topic exchange', () => {
    expect(topicMatches('email.delivered', 'email.delivered')).toBe(true);
    expect(topicMatches('email.*', 'email.delivered')).toBe(true);
    expect(topicMatches('email.*', 'internal.domain.state')).toBe(false);
    expect(topicMatches('internal.*', 'internal.domain.state')).toBe(false);
    expect(topicMatches('internal.#', 'internal.domain.state')).toBe(true);
    expect(topicMatches('#', 'contact.created')).toBe(true);
    expect(topicMatches('#.state', 'internal.domain.state')).toBe(true);
    expect(topicMatches('scheduler.set-timer', 'scheduler.cancel-timer')).toBe(false);
  });
});

describe('names', () => {
  it('derives every exchange and queue name from the prefix', () => {
    expect(exchangeNames('postline')).toEqual({
      events: 'postline.events',
      commands: 'postline.commands',
      unroutable: 'postline.unroutable',
    });
    expect(consumerQueueNames('postline', 'sender', 'domain-state', [1_000, 250])).toEqual({
      work: 'postline.sender.domain-state',
      dead: 'postline.sender.domain-state.dead',
      tiers: [
        { delayMs: 1_000, queue: 'postline.sender.domain-state.retry.1s' },
        { delayMs: 250, queue: 'postline.sender.domain-state.retry.250ms' },
      ],
    });
  });

  it('refuses names that would break the dotted scheme', () => {
    expect(() => consumerQueueNames('postline', 'sender.x', 'c', [])).toThrow(/service/);
    expect(() => exchangeNames('has space')).toThrow(/prefix/);
  });
});

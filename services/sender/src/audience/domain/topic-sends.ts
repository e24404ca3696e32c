import type { Subscription } from '@postline/contracts';
import { domainToUnicode } from 'node:url';
import { effectiveSubscription } from './contacts.ts';

// Sending under a topic: which recipients the topic keeps an email from, and why.

/** A team's topic with the explicit choices of an email's recipients. */
export type TopicSubscriptions = {
  id: string;
  name: string;
  defaultSubscription: Subscription;
  /** By the recipient's address as asked; recipients who are not contacts, or made no choice, are absent. */
  choices: ReadonlyMap<string, Subscription>;
};

/** A recipient position in an email's recipients list. */
type Positioned = { position: number };

/**
 * The forms a contact's email may take for an envelope address (whose domain is in punycode): as it is, and
 * with the domain in Unicode, as a contact keeps an IDN it was given so.
 */
export function contactForms(address: string): string[] {
  const at = address.lastIndexOf('@');
  const domain = domainToUnicode(address.slice(at + 1));
  const unicode = `${address.slice(0, at)}@${domain}`;
  return domain === '' || unicode === address ? [address] : [address, unicode];
}

/** A recipient (position, address) that the email's topic keeps it from, and why, naming the topic. */
export type TopicOptOut = { position: number; address: string; reason: string };

/**
 * The recipients a topic keeps an email from: those whose effective subscription is opt_out (an explicit
 * opt-out, or no choice under an opt-out topic; a recipient who is not a contact has made no choice).
 */
export function topicOptOuts(topic: TopicSubscriptions | undefined, addresses: readonly string[]): TopicOptOut[] {
  if (!topic) return [];
  const named = `the topic ${JSON.stringify(topic.name)} (${topic.id})`;
  return addresses.flatMap((address, position) => {
    const explicit = topic.choices.get(address);
    if (effectiveSubscription(explicit, topic.defaultSubscription) === 'opt_in') return [];
    const reason =
      explicit === undefined
        ? `The recipient has not opted in to ${named}, which is opt-out by default, so the email was not sent to it.`
        : `The recipient opted out of ${named}, so the email was not sent to it.`;
    return [{ position, address, reason }];
  });
}

/** The recipients to deliver to: all but those the topic keeps the email from. */
export function withoutOptOuts<R extends Positioned>(recipients: R[], optOuts: readonly TopicOptOut[]): R[] {
  if (optOuts.length === 0) return recipients;
  const kept = new Set(optOuts.map((optOut) => optOut.position));
  return recipients.filter((recipient) => !kept.has(recipient.position));
}

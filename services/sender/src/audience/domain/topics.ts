import type { Subscription } from '@postline/contracts';
import type { Refusal } from '../../message/index.ts';

/** Topic names are at most 50 characters, descriptions at most 200 (as Resend's). */
export const TOPIC_NAME_MAX = 50;
export const TOPIC_DESCRIPTION_MAX = 200;

/**
 * A topic's default subscription is fixed at creation. A change that carries it (clients send the whole
 * record back) is tolerated when it is the topic's own and refused otherwise, rather than silently ignored.
 */
export function checkDefaultSubscription(current: Subscription, given: Subscription | undefined): Refusal | undefined {
  if (given === undefined || given === current) return undefined;
  return { name: 'validation_error', message: 'The `default_subscription` of a topic cannot be changed.' };
}

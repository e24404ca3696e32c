// The review of a broadcast before it goes: what blocks it (`error`), what could keep it from the inbox or
// from reading well (`warning`), and what passed (`ok`), each with what was found. Values only: the use case
// (use-cases/broadcast-review.ts) reads the broadcast, its domain, segment, topic and audience. Sending runs
// the same checks (without the recipient count and the insights, which never block), so the API and the
// dashboard refuse the same broadcasts.
import type { PropertyDefinition } from '../../audience/index.ts';
import type { Insight } from '../../emails/index.ts';
import { personaliseBroadcast, type BroadcastMessage } from './broadcast-emails.ts';

export type ReviewLevel = 'error' | 'warning' | 'ok';

export type ReviewCheck = { check: string; level: ReviewLevel; message: string };

export type ReviewInput = {
  message: BroadcastMessage;
  /** The message as POST /emails would check it: its refusal's message, or null when it passes. */
  refusal: string | null;
  /** The team's right to send from the from domain (null: the from address is missing or unreadable). */
  sender: { ok: true; domain: string } | { ok: false; message: string } | null;
  segment: 'missing' | 'not_found' | { name: string };
  topic: 'none' | 'not_found' | { name: string };
  properties: readonly PropertyDefinition[];
  /** The contacts it would reach now, and those of them on the suppression list (absent: not counted). */
  audience?: { recipients: number; suppressed: number };
  /** The email insights of the message as a contact gets it (absent: not read). */
  insights?: readonly Insight[];
};

/** What the unsubscribe placeholders are filled with to find whether the message has one. */
const PROBE_URL = 'https://unsubscribe.invalid/probe';

/** The placeholders to use for the unsubscribe link (the contact's preference page). */
export const UNSUBSCRIBE_PLACEHOLDER = '{{{RESEND_UNSUBSCRIBE_URL}}}';

/**
 * Every check, in the order a person should act on them. The message is rendered, with the fan-out's own
 * renderer, for a contact that has every field and property: what is still empty then, no contact can fill.
 */
export function reviewBroadcast(input: ReviewInput): ReviewCheck[] {
  const { message } = input;
  const checks: ReviewCheck[] = [];
  const add = (check: string, level: ReviewLevel, text: string) => checks.push({ check, level, message: text });

  const from = message.fromHeader?.trim() ?? '';
  if (from === '') add('from_domain', 'error', 'Add a From address on one of your verified domains.');
  else if (input.sender === null)
    add('from_domain', 'error', input.refusal ?? `“${from}” is not a valid From address.`);
  else if (!input.sender.ok) add('from_domain', 'error', input.sender.message);
  else add('from_domain', 'ok', `It is sent from ${input.sender.domain}, which you may send from.`);

  const subject = message.subject?.trim() ?? '';
  if (subject === '') add('subject', 'error', 'Add a subject.');
  else add('subject', 'ok', `The subject is “${subject}”.`);

  const hasBody = Boolean(message.html) || Boolean(message.text);
  if (!hasBody) add('content', 'error', 'Add the message: its HTML or its text.');
  else if (input.refusal !== null && from !== '' && input.sender !== null && subject !== '')
    add('content', 'error', input.refusal);
  else add('content', 'ok', 'The message can be sent as POST /emails would send it.');

  if (input.segment === 'missing') add('segment', 'error', 'Choose the segment it goes to.');
  else if (input.segment === 'not_found') add('segment', 'error', 'Its segment was deleted: choose another.');
  else add('segment', 'ok', `It goes to the segment ${input.segment.name}.`);

  if (input.topic === 'not_found') add('topic', 'error', 'Its topic was deleted: choose another, or none.');
  else if (input.topic === 'none')
    add('topic', 'ok', 'No topic: it goes to every contact of the segment who has not unsubscribed.');
  else add('topic', 'ok', `Under the topic ${input.topic.name}: contacts who left it do not get it.`);

  const probe = personaliseBroadcast(message, probeContact(input.properties), input.properties, PROBE_URL);
  const linked = Boolean(probe.html?.includes(PROBE_URL) || probe.text?.includes(PROBE_URL));
  if (!hasBody || linked) {
    add('unsubscribe_link', linked ? 'ok' : 'error', linked ? 'It has an unsubscribe link.' : 'Add the message first.');
  } else {
    add(
      'unsubscribe_link',
      'error',
      `It has no unsubscribe link: add ${UNSUBSCRIBE_PLACEHOLDER} (each contact's own preference page, where they leave the topic or every broadcast). Mailbox providers require bulk mail to let its readers leave.`,
    );
  }

  // The unsubscribe link is known to every contact; anything else still empty has no property behind it.
  const unfilled = probe.missing.filter(
    (key) => key !== 'RESEND_UNSUBSCRIBE_URL' && key !== 'POSTLINE_UNSUBSCRIBE_URL',
  );
  if (unfilled.length === 0) add('placeholders', 'ok', 'Every placeholder can be filled.');
  else {
    const named = unfilled.map((key) => `{{{${key}}}}`).join(', ');
    add(
      'placeholders',
      'warning',
      `No contact can fill ${named}: there is no such contact field or property, so it renders as nothing. Create the property, fix the name, or give a fallback ({{{${unfilled[0]}|…}}}).`,
    );
  }

  if (input.audience) {
    const { recipients, suppressed } = input.audience;
    const also =
      suppressed === 0
        ? ''
        : ` ${plural(suppressed, 'more is', 'more are')} on your suppression list and will not be sent it.`;
    if (recipients === 0)
      add('recipients', 'warning', `No contact will receive it: the segment has no contact who is subscribed.${also}`);
    else
      add(
        'recipients',
        'ok',
        `${plural(recipients, 'contact', 'contacts')} will receive it (after unsubscribes and topic opt-outs).${also}`,
      );
  }

  for (const insight of input.insights ?? []) {
    add(insight.id, insight.passed ? 'ok' : 'warning', `${insight.title}: ${insight.detail}`);
  }
  return checks;
}

/** A contact with every field and property filled, so that only placeholders no contact can fill stay empty. */
export function probeContact(properties: readonly PropertyDefinition[]) {
  return {
    email: 'contact@example.invalid',
    first_name: 'First',
    last_name: 'Last',
    properties: Object.fromEntries(properties.map((property) => [property.id, 'value'])),
  };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

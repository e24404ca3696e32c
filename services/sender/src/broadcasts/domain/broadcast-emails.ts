// What one contact receives of a broadcast: its subject, html and text personalised, with the headers that
// let the recipient unsubscribe in one click (RFC 8058), and the checks of a broadcast's message fields.
import type { PropertyDefinition } from '../../audience/index.ts';
import { parseEmailRequest, type EmailRequest, type Refusal } from '../../message/index.ts';
import { escapeHtml, renderPlaceholders, type PlaceholderValue } from '../../templates/index.ts';

/** Contacts per fan-out page (one transaction each). */
export const FAN_OUT_PAGE_CONTACTS = 1000;

/** A broadcast's message, as stored. */
export type BroadcastMessage = {
  fromHeader: string | null;
  subject: string | null;
  replyTo: readonly string[];
  previewText: string | null;
  html: string | null;
  text: string | null;
};

/**
 * The message fields checked as POST /emails checks them (from, reply_to, subject, html or text), so that
 * every email a broadcast makes is one POST /emails would accept; returns the parsed request (its from
 * address and domain) or the refusal.
 */
export function checkBroadcastMessage(
  message: BroadcastMessage,
  now: Date,
): { ok: true; request: EmailRequest } | { ok: false; refusal: Refusal } {
  const parsed = parseEmailRequest(
    {
      from: message.fromHeader,
      // Any valid address: the recipients are the segment's contacts.
      to: 'recipient@example.com',
      subject: message.subject,
      reply_to: message.replyTo.length === 0 ? undefined : [...message.replyTo],
      html: message.html,
      text: message.text,
    },
    { now, batch: false },
  );
  return parsed.ok ? { ok: true, request: parsed.request } : parsed;
}

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const HEADER_BREAKS = /[\x00-\x08\x0a-\x1f\x7f]+/g;

/** A contact as personalisation reads it. Properties by property id, as contacts keep them. */
export type BroadcastContact = {
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, string | number | null>;
};

/** `missing`: the placeholders that had neither a value nor a fallback (they rendered as nothing). */
export type PersonalisedMessage = { subject: string; html: string | null; text: string | null; missing: string[] };

/**
 * The broadcast's subject, html and text for one contact. `{{{contact.first_name}}}`, `last_name`,
 * `email` and `{{{contact.<property key>}}}` (the contact's value, else the property's fallback value),
 * the legacy `{{{FIRST_NAME}}}`, `{{{LAST_NAME}}}`, `{{{EMAIL}}}`, and `{{{RESEND_UNSUBSCRIBE_URL}}}` (or
 * `{{{POSTLINE_UNSUBSCRIBE_URL}}}`: the contact's preference page). A placeholder without a value takes its
 * own fallback (`{{{contact.first_name|there}}}`), else nothing. Values are HTML-escaped in the html only.
 * The preview text goes first in the html, hidden, where inboxes take their snippet from.
 */
export function personaliseBroadcast(
  message: BroadcastMessage,
  contact: BroadcastContact,
  properties: readonly PropertyDefinition[],
  unsubscribeUrl: string,
): PersonalisedMessage {
  const byKey = new Map(properties.map((property) => [property.key, property]));
  const valueOf = (key: string): PlaceholderValue | null | undefined => {
    switch (key) {
      case 'contact.first_name':
      case 'FIRST_NAME':
        return contact.first_name;
      case 'contact.last_name':
      case 'LAST_NAME':
        return contact.last_name;
      case 'contact.email':
      case 'EMAIL':
        return contact.email;
      case 'RESEND_UNSUBSCRIBE_URL':
      case 'POSTLINE_UNSUBSCRIBE_URL':
        return unsubscribeUrl;
    }
    if (!key.startsWith('contact.')) return undefined;
    const property = byKey.get(key.slice('contact.'.length));
    if (!property) return undefined;
    return contact.properties[property.id] ?? property.fallback_value;
  };
  const missing = new Set<string>();
  const render = (text: string, html: boolean) => {
    const rendered = renderPlaceholders(text, valueOf, { html });
    for (const key of rendered.missing) missing.add(key);
    return rendered.text;
  };
  const html = message.html === null ? null : render(message.html, true);
  return {
    // A contact's value may hold a line break: never in a header.
    subject: render(message.subject ?? '', false).replace(HEADER_BREAKS, ' '),
    html: html !== null && message.previewText ? previewTextBlock(message.previewText) + html : html,
    text: message.text === null || message.text === '' ? message.text : render(message.text, false),
    missing: [...missing],
  };
}

/** The hidden block inboxes show as the preview snippet (and readers never see). */
function previewTextBlock(previewText: string): string {
  return `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all" aria-hidden="true">${escapeHtml(previewText)}</div>`;
}

/**
 * RFC 8058 headers: `List-Unsubscribe` with the https one-click link first and a mailto on the sending
 * domain's return path (the token in its subject: a token does not fit a 64-character local part), and
 * `List-Unsubscribe-Post`. Both are in the DKIM signature's h= (delivery/mime/dkim.ts SIGNED_HEADERS).
 */
export function unsubscribeHeaders(url: string, returnPath: string, token: string): { name: string; value: string }[] {
  return [
    { name: 'List-Unsubscribe', value: `<${url}>, <mailto:unsubscribe@${returnPath}?subject=unsubscribe%20${token}>` },
    { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
  ];
}

// What a broadcast recipient's unsubscribe link takes and shows: the body of a POST (the RFC 8058 one-click
// `List-Unsubscribe=One-Click`, or the preference page's form) and the preference page itself, plain HTML
// that works without JavaScript or any outside resource (a strict CSP allows neither).
import type { Subscription } from '@postline/contracts';
import type { Refusal } from '../../message/index.ts';
import type { SubscriptionChoice } from '../../audience/index.ts';
import { escapeHtml } from '../../templates/index.ts';

/** A topic as the page shows it: one the contact may see, with its effective subscription. */
export type PreferenceTopic = { id: string; name: string; description: string | null; subscription: Subscription };

/** What the page is about: the contact's address and its choices. */
export type Preferences = { email: string; unsubscribed: boolean; topics: readonly PreferenceTopic[] };

/**
 * A POST to an unsubscribe link: the one-click unsubscribe, or the page's choices (`unsubscribed` absent
 * when the body does not decide it).
 */
export type UnsubscribeRequest =
  | { kind: 'one-click' }
  | { kind: 'preferences'; unsubscribed: boolean | undefined; topics: SubscriptionChoice[] };

/** The field the page's form always carries, so that an unticked "unsubscribe from everything" counts. */
export const PREFERENCE_FORM_FIELD = 'form';
const PREFERENCE_FORM_VALUE = 'preferences';
const UNSUBSCRIBE_ALL_FIELD = 'unsubscribe_all';
const TOPIC_FIELD = /^topics\[([0-9A-Fa-f-]{36})\]$/;

/**
 * What a POST body asks (its fields by name, the last of a name winning). `List-Unsubscribe=One-Click` is
 * the one-click unsubscribe whatever else comes with it (RFC 8058 §3.2); otherwise the page's fields
 * `topics[<id>]=opt_in|opt_out` and `unsubscribe_all=1` (with `form=preferences`, the page's own form, an
 * absent `unsubscribe_all` subscribes again). A body with neither is refused.
 */
export function parseUnsubscribeRequest(
  fields: Readonly<Record<string, string>>,
): { ok: true; request: UnsubscribeRequest } | { ok: false; refusal: Refusal } {
  if (fields['List-Unsubscribe']?.trim() === 'One-Click') return { ok: true, request: { kind: 'one-click' } };
  const topics: SubscriptionChoice[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const topic = TOPIC_FIELD.exec(name);
    if (!topic) continue;
    if (value !== 'opt_in' && value !== 'opt_out') {
      return refused(`Invalid \`${name}\` field: it must be \`opt_in\` or \`opt_out\`.`);
    }
    topics.push({ id: topic[1]!.toLowerCase(), subscription: value });
  }
  const all = fields[UNSUBSCRIBE_ALL_FIELD];
  if (all !== undefined && all !== '1') return refused(`Invalid \`${UNSUBSCRIBE_ALL_FIELD}\` field: it must be \`1\`.`);
  const ownForm = fields[PREFERENCE_FORM_FIELD] === PREFERENCE_FORM_VALUE;
  if (!ownForm && all === undefined && topics.length === 0) {
    return refused(
      "The body must be `List-Unsubscribe=One-Click`, or the preference page's `topics[<id>]` and `unsubscribe_all` fields.",
    );
  }
  const unsubscribed = all === '1' ? true : ownForm ? false : undefined;
  return { ok: true, request: { kind: 'preferences', unsubscribed, topics } };
}

function refused(message: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { name: 'validation_error', message } };
}

/**
 * An address as the page shows it, partly masked so that a forwarded link does not tell the address whole:
 * the local part's first character (two when it is long), then `•••`, then the domain.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  const local = email.slice(0, at);
  return `${local.slice(0, local.length > 5 ? 2 : 1)}•••${email.slice(at)}`;
}

/** The one-click POST's answer (RFC 8058 asks for no redirect and no further step). */
export const ONE_CLICK_ANSWER = 'You have been unsubscribed.\n';

/** The preference page: after a saved form, with a confirmation at the top (a status region). */
export function renderPreferencePage(preferences: Preferences, options: { saved: boolean }): string {
  const topics = preferences.topics.map(topicFieldset).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Email preferences</title>
<style>
body{font-family:system-ui,sans-serif;line-height:1.5;margin:0;padding:1rem;color:#1a1a1a;background:#fff}
main{max-width:36rem;margin:0 auto}
fieldset{border:1px solid #bbb;border-radius:4px;margin:0 0 1rem;padding:.75rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.choice{display:inline-block;margin-right:1.5rem}
.status{border:2px solid #1e7d32;border-radius:4px;padding:.5rem 1rem;background:#edf7ee}
button{font:inherit;padding:.5rem 1.25rem;border:2px solid #1a1a1a;border-radius:4px;background:#1a1a1a;color:#fff;cursor:pointer}
button:focus,input:focus{outline:3px solid #1565c0;outline-offset:2px}
</style>
</head>
<body>
<main>
<h1>Email preferences</h1>
${options.saved ? '<p class="status" role="status">Your preferences have been saved.</p>\n' : ''}<p>Choose which emails <strong>${escapeHtml(maskEmail(preferences.email))}</strong> receives.</p>
<form method="post">
<input type="hidden" name="${PREFERENCE_FORM_FIELD}" value="${PREFERENCE_FORM_VALUE}">
${topics === '' ? '' : `<h2>Topics</h2>\n${topics}\n`}<h2>All emails</h2>
<p>
<input type="checkbox" id="unsubscribe-all" name="${UNSUBSCRIBE_ALL_FIELD}" value="1"${preferences.unsubscribed ? ' checked' : ''}>
<label for="unsubscribe-all">Unsubscribe from all marketing emails</label>
</p>
<p><button type="submit">Save preferences</button></p>
</form>
</main>
</body>
</html>
`;
}

function topicFieldset(topic: PreferenceTopic): string {
  const name = `topics[${topic.id}]`;
  const option = (value: Subscription, label: string) => {
    const id = `topic-${topic.id}-${value === 'opt_in' ? 'in' : 'out'}`;
    const checked = topic.subscription === value ? ' checked' : '';
    return `<span class="choice"><input type="radio" id="${id}" name="${name}" value="${value}"${checked}> <label for="${id}">${label}</label></span>`;
  };
  const description = topic.description ? `<p id="topic-${topic.id}-about">${escapeHtml(topic.description)}</p>\n` : '';
  const describedBy = topic.description ? ` aria-describedby="topic-${topic.id}-about"` : '';
  return `<fieldset${describedBy}>
<legend>${escapeHtml(topic.name)}</legend>
${description}${option('opt_in', 'Subscribed')}
${option('opt_out', 'Unsubscribed')}
</fieldset>`;
}

// The 19 event names an endpoint may subscribe to, grouped by family for the event picker. Checked against
// the contracts' PublicEventType: a name added there and missing here fails the type check.
import type { PublicEventType } from '@postline/contracts';

export const EVENT_FAMILIES = [
  {
    family: 'Email',
    events: [
      'email.scheduled',
      'email.sent',
      'email.delivered',
      'email.delivery_delayed',
      'email.bounced',
      'email.complained',
      'email.opened',
      'email.clicked',
      'email.suppressed',
      'email.failed',
      'email.received',
    ],
  },
  { family: 'Contact', events: ['contact.created', 'contact.updated', 'contact.deleted'] },
  { family: 'Domain', events: ['domain.created', 'domain.updated', 'domain.deleted'] },
  { family: 'Suppression', events: ['suppression.added', 'suppression.removed'] },
] as const satisfies readonly { family: string; events: readonly PublicEventType[] }[];

type Listed = (typeof EVENT_FAMILIES)[number]['events'][number];
/** `true` only when every public event is listed above; otherwise the missing names, a type error below. */
type EveryEventListed = [Exclude<PublicEventType, Listed>] extends [never] ? true : Exclude<PublicEventType, Listed>;
const everyEventListed: EveryEventListed = true;

export const ALL_EVENTS: readonly PublicEventType[] = everyEventListed
  ? EVENT_FAMILIES.flatMap((f) => [...f.events])
  : [];

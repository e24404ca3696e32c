// Insights on one email: what in the message or its sending domain could keep it from the inbox (needs
// attention) or from reading well (could improve), each with what was found and why it matters. Values only:
// the use case reads the email, its domain and the From domain's DMARC record.
import { Parser } from 'htmlparser2';
import { getDomain } from 'tldts';

export type InsightId =
  | 'dmarc_record'
  | 'html_size'
  | 'list_unsubscribe'
  | 'text_part'
  | 'link_domains'
  | 'tracking_domain'
  | 'image_alt';

export type Insight = {
  id: InsightId;
  group: 'needs_attention' | 'could_improve';
  passed: boolean;
  title: string;
  detail: string;
};

/** What the insights read of an email and of the place it was sent from. */
export type InsightInput = {
  html: string | null;
  /** null: made from the html when sent (a raw message: it has none); '': the sender asked for no text part. */
  text: string | null;
  /** Sent as the client wrote it (the relay's, message/rfc822): nothing is added to it, a text part neither. */
  raw: boolean;
  fromDomain: string;
  headers: readonly { name: string; value: string }[];
  /** Sent to a list (a broadcast's, or under a topic): mailbox providers require a one-click unsubscribe. */
  bulk: boolean;
  /** The sending domain's tracking, as applied: on, and its tracking host when it is verified. */
  tracking: { on: boolean; host: string | null };
  /** Whether the From domain (or its organisational domain) publishes a DMARC record; null when DNS failed. */
  dmarc: boolean | null;
};

/** Gmail clips a message whose HTML is larger than this, hiding the rest behind "View entire message". */
export const GMAIL_CLIP_BYTES = 102 * 1024;

/** How much of the HTML the link and image checks read. */
const READ_CHARS = 1_000_000;

/** The hosts an email's links point at, and its images without alt text, read with an HTML tokenizer. */
export function readHtml(html: string): { linkHosts: string[]; imagesWithoutAlt: number } {
  const hosts = new Set<string>();
  let imagesWithoutAlt = 0;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'a' && attributes.href) {
          try {
            const url = new URL(attributes.href);
            if (url.protocol === 'http:' || url.protocol === 'https:') hosts.add(url.hostname.toLowerCase());
          } catch {
            // A relative or broken href points nowhere a reader can be sent.
          }
        }
        if (name === 'img' && attributes.alt === undefined) imagesWithoutAlt++;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return { linkHosts: [...hosts], imagesWithoutAlt };
}

/** Whether a host is the domain itself or under the same organisational domain (links.acme.com for acme.com). */
function sameOrganisation(host: string, domain: string): boolean {
  if (host === domain || host.endsWith(`.${domain}`)) return true;
  const org = getDomain(domain);
  return org !== null && getDomain(host) === org;
}

/** Every insight of an email, in the order a reader should act on them. */
export function emailInsights(input: InsightInput): Insight[] {
  const html = input.html ?? '';
  // Links and images are read in the first megabyte: past Gmail's clip the message fails the size check anyway,
  // and a message of many megabytes would hold the event loop.
  const { linkHosts, imagesWithoutAlt } = input.html
    ? readHtml(input.html.slice(0, READ_CHARS))
    : { linkHosts: [], imagesWithoutAlt: 0 };
  const htmlBytes = Buffer.byteLength(html);
  const hasUnsubscribe = input.headers.some((h) => h.name.toLowerCase() === 'list-unsubscribe');
  const foreign = linkHosts.filter((host) => !sameOrganisation(host, input.fromDomain) && host !== input.tracking.host);
  const kb = (bytes: number) => `${Math.round(bytes / 1024)} KB`;
  return [
    {
      id: 'dmarc_record',
      group: 'needs_attention',
      passed: input.dmarc !== false,
      title: 'A DMARC record for the From domain',
      detail:
        input.dmarc === null
          ? `The DMARC record of ${input.fromDomain} could not be read just now (DNS did not answer).`
          : input.dmarc
            ? `${input.fromDomain} publishes a DMARC record.`
            : `Neither _dmarc.${input.fromDomain} nor its organisational domain has a DMARC record. Gmail, Yahoo and Microsoft require one of senders of bulk mail and reject or junk mail without it; publish at least v=DMARC1; p=none.`,
    },
    {
      id: 'html_size',
      group: 'needs_attention',
      passed: htmlBytes <= GMAIL_CLIP_BYTES,
      title: 'HTML under Gmail’s 102 KB clipping size',
      detail:
        htmlBytes <= GMAIL_CLIP_BYTES
          ? `The HTML is ${kb(htmlBytes)}.`
          : `The HTML is ${kb(htmlBytes)}: Gmail shows only its first 102 KB and hides the rest (the unsubscribe link and the open pixel with it) behind "View entire message". Trim inline styles and markup.`,
    },
    {
      id: 'list_unsubscribe',
      group: 'needs_attention',
      passed: !input.bulk || hasUnsubscribe,
      title: 'A List-Unsubscribe header on bulk mail',
      detail: !input.bulk
        ? 'Not bulk mail: sent on its own, not by a broadcast or under a topic.'
        : hasUnsubscribe
          ? 'It carries List-Unsubscribe, so mailbox providers offer their own unsubscribe button.'
          : 'Bulk mail without List-Unsubscribe: Gmail and Yahoo require a one-click unsubscribe of bulk senders, and recipients who cannot leave a list mark it as spam instead.',
    },
    {
      id: 'text_part',
      group: 'could_improve',
      passed: input.html === null || (input.text !== '' && !(input.raw && input.text === null)),
      title: 'A plain-text part',
      detail:
        input.html !== null && (input.text === '' || (input.raw && input.text === null))
          ? 'It has HTML only: some mail clients and screen readers show the text part, and spam filters score an HTML-only message higher.'
          : input.text === null && input.html !== null
            ? 'A text part is made from the HTML when it is sent.'
            : 'It has a text part.',
    },
    {
      id: 'link_domains',
      group: 'could_improve',
      passed: foreign.length === 0,
      title: 'Links to the sender’s own domain',
      detail:
        foreign.length === 0
          ? linkHosts.length === 0
            ? 'It has no links.'
            : `Every link goes to ${input.fromDomain} or its tracking host.`
          : `Links go to ${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ` and ${foreign.length - 5} more` : ''}, not ${input.fromDomain}: links whose domain differs from the sender's look like phishing to filters and readers.`,
    },
    {
      id: 'tracking_domain',
      group: 'could_improve',
      passed: !input.tracking.on || input.tracking.host !== null,
      title: 'Tracking on a domain of your own',
      detail: !input.tracking.on
        ? 'Open and click tracking are off for this domain.'
        : input.tracking.host
          ? `Opens and clicks are tracked at ${input.tracking.host}.`
          : 'Tracking is asked for, but the domain has no verified tracking subdomain, so links and the pixel are left as they are: set one up to track.',
    },
    {
      id: 'image_alt',
      group: 'could_improve',
      passed: imagesWithoutAlt === 0,
      title: 'Images with alt text',
      detail:
        imagesWithoutAlt === 0
          ? 'Every image has alt text (or there are none).'
          : `${imagesWithoutAlt} image${imagesWithoutAlt === 1 ? ' has' : 's have'} no alt text: most clients block images until asked, and screen readers read the alt text, so the message must make sense without them.`,
    },
  ];
}

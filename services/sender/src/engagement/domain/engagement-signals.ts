// Whether an open was a machine's (machine_open) and a click a scanner's (scanner_click): ONE table of
// rules, each with the evidence for it (the observations and sources it cites). A rule that
// matches sets the flag; the event is still emitted (the flag is extra information, never a filter).
//
// "Data-centre address" is known offline from a small embedded list of the largest clouds' and mail
// security providers' published ranges (DATA_CENTRE_RANGES below): no lookup on any path, and it errs
// towards "not a data centre" for a provider not listed.
import type { TrackingKind } from './tracking-links.ts';

/** One request for a pixel or a tracking link, with what recording it learned about the email. */
export type Engagement = {
  kind: TrackingKind;
  /** GET or HEAD. */
  method: string;
  ip: string;
  userAgent: string;
  at: Date;
  /** When the email was first delivered to a recipient (its recipient's delivered time); null: not yet. */
  deliveredAt: Date | null;
};

export type SignalRule = {
  name: string;
  kind: TrackingKind;
  /** Why the rule holds, with its source. */
  evidence: string;
  matches: (engagement: Engagement) => boolean;
};

/** An open this soon after delivery from a data-centre address is a prefetch, not a reader (seconds). */
export const OPEN_PREFETCH_WINDOW_MS = 10_000;
/** A click this soon after delivery is a security gateway following every link (seconds). */
export const SCANNER_CLICK_WINDOW_MS = 5_000;

/**
 * Published ranges of the largest clouds and mail-security providers (IPv4 CIDRs), enough to tell a
 * scanner's or prefetcher's egress from a reader's ISP address without any lookup. Not exhaustive, on
 * purpose: an address not listed counts as a reader's.
 */
export const DATA_CENTRE_RANGES: readonly string[] = [
  // Amazon Web Services (ip-ranges.amazonaws.com: the largest EC2 blocks)
  '3.0.0.0/9',
  '18.128.0.0/9',
  '34.192.0.0/10',
  '52.0.0.0/10',
  '54.64.0.0/11',
  '54.144.0.0/12',
  // Google Cloud (gstatic.com/ipranges/cloud.json: the largest blocks) and Google's own
  '34.64.0.0/10',
  '35.184.0.0/13',
  '66.102.0.0/20',
  '66.249.64.0/19',
  '74.125.0.0/16',
  // Microsoft Azure and Exchange Online Protection, where Safe Links detonates links
  '13.64.0.0/11',
  '20.0.0.0/11',
  '40.64.0.0/10',
  '52.96.0.0/12',
  '104.40.0.0/13',
  // Proofpoint, Mimecast, Barracuda
  '148.163.128.0/17',
  '205.139.110.0/24',
  '207.211.30.0/24',
  '64.235.144.0/20',
  // Hetzner, OVH, DigitalOcean
  '5.9.0.0/16',
  '51.68.0.0/16',
  '159.203.0.0/16',
];

/** Apple's egress ranges, where Mail Privacy Protection's prefetches come from. */
const APPLE_RANGES = ['17.0.0.0/8'];

const SCANNER_AGENTS =
  /safelinks|microsoft office|ms-office|proofpoint|urldefense|mimecast|barracuda|cudasvc|cisco|ironport|trend ?micro|forcepoint|symantec|messagelabs|sophos|fireeye|zscaler|bot\b|crawler|spider|curl\/|python-requests|go-http-client|wget\//i;

function since(engagement: Engagement): number | undefined {
  return engagement.deliveredAt === null ? undefined : engagement.at.getTime() - engagement.deliveredAt.getTime();
}

function within(engagement: Engagement, windowMs: number): boolean {
  const elapsed = since(engagement);
  return elapsed !== undefined && elapsed >= -1000 && elapsed <= windowMs;
}

/** The rules, each flagging its kind; the first that matches names the reason. */
export const SIGNAL_RULES: readonly SignalRule[] = [
  {
    name: 'apple-mpp',
    kind: 'open',
    evidence:
      "Apple Mail Privacy Protection pre-loads all remote content through Apple's relays (iCloud Private Relay " +
      'egress, 17.0.0.0/8) whether or not the mail is read (wordtothewise.com/2021/09/apple-mpp-reporting-and-geolocation; ' +
      'help.socketlabs.com/docs/identifying-apple-mpp-opens-in-notification-api-events)',
    matches: (e) => inRanges(e.ip, APPLE_RANGES),
  },
  {
    name: 'apple-mpp-user-agent',
    kind: 'open',
    evidence:
      'MPP fetches carry a bare `Mozilla/5.0` with no platform tokens, unlike any mail client or browser ' +
      '(help.socketlabs.com/docs/identifying-apple-mpp-opens-in-notification-api-events)',
    matches: (e) => /^Mozilla\/5\.0\s*$/.test(e.userAgent),
  },
  {
    name: 'gmail-image-proxy',
    kind: 'open',
    evidence:
      'Gmail fetches images through its proxy (GoogleImageProxy user agent, via ggpht.com / googleusercontent.com), ' +
      'possibly before a person opens the mail (wordtothewise.com/2013/12/gmail-deploys-image-proxy-servers)',
    matches: (e) => /GoogleImageProxy|ggpht\.com|googleusercontent\.com/i.test(e.userAgent),
  },
  {
    name: 'yahoo-mail-proxy',
    kind: 'open',
    evidence:
      'Yahoo Mail fetches images through its proxy with a YahooMailProxy user agent, which names ' +
      'help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
    matches: (e) => /YahooMailProxy/i.test(e.userAgent),
  },
  {
    name: 'head-pixel',
    kind: 'open',
    evidence:
      'A mail client shows an image with GET; a HEAD on the pixel is a link checker or prefetcher asking whether ' +
      'it exists (the same signal as a HEAD on a link: ' +
      'check.live-direct-marketing.online/blog/bot-clicks-security-scanners-detect)',
    matches: (e) => e.method === 'HEAD',
  },
  {
    name: 'data-centre-prefetch',
    kind: 'open',
    evidence:
      'Opens within seconds of delivery from a data-centre address are prefetches by proxies and scanners, not ' +
      'readers (SocketLabs saw downloads right after sync: ' +
      'help.socketlabs.com/docs/identifying-apple-mpp-opens-in-notification-api-events)',
    matches: (e) => within(e, OPEN_PREFETCH_WINDOW_MS) && inRanges(e.ip, DATA_CENTRE_RANGES),
  },
  {
    name: 'head-request',
    kind: 'click',
    evidence:
      'A browser following a link sends GET; HEAD is a link checker or a security gateway probing the target ' +
      "(click scanners' heuristics: check.live-direct-marketing.online/blog/bot-clicks-security-scanners-detect)",
    matches: (e) => e.method === 'HEAD',
  },
  {
    name: 'scanner-user-agent',
    kind: 'click',
    evidence:
      'Security gateways name themselves in the user agent: Microsoft Safe Links, Proofpoint URL Defense, Mimecast, ' +
      'Barracuda, Cisco, Trend Micro (check.live-direct-marketing.online/blog/bot-clicks-security-scanners-detect)',
    matches: (e) => SCANNER_AGENTS.test(e.userAgent),
  },
  {
    name: 'click-right-after-delivery',
    kind: 'click',
    evidence:
      'A sandbox "clicks every link within seconds" of delivery (Microsoft Defender); no person reads and clicks ' +
      'that fast (check.live-direct-marketing.online/blog/microsoft-defender-link-click-pattern)',
    matches: (e) => within(e, SCANNER_CLICK_WINDOW_MS),
  },
];

/** The rule that flags this open or click as a machine's, or undefined for a reader's. */
export function machineRule(engagement: Engagement): SignalRule | undefined {
  return SIGNAL_RULES.find((rule) => rule.kind === engagement.kind && rule.matches(engagement));
}

/** Whether an IPv4 address (or IPv4-mapped IPv6, `::ffff:a.b.c.d`) lies in one of the CIDRs. */
export function inRanges(ip: string, cidrs: readonly string[]): boolean {
  const address = ipv4ToNumber(ip.startsWith('::ffff:') ? ip.slice(7) : ip);
  if (address === undefined) return false;
  return cidrs.some((cidr) => {
    const [base, bits] = cidr.split('/');
    const network = ipv4ToNumber(base ?? '');
    const prefix = Number(bits);
    if (network === undefined) return false;
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    return (address & mask) >>> 0 === (network & mask) >>> 0;
  });
}

function ipv4ToNumber(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

// One DMARC aggregate report's XML (RFC 9990, and RFC 7489 appendix C which it replaced) read into plain values,
// checked, or refused with a reason. Pure: the XML comes in as a string.
//
// Both formats are one shape with a few differences, all accepted: RFC 9990 puts `<feedback>` in the
// `urn:ietf:params:xml:ns:dmarc-2.0` namespace, adds `discovery_method`, `np` and `testing` to
// `policy_published` (and drops `pct`), `generator` to `report_metadata`, `envelope_from` to `identifiers`,
// and allows only `mfrom` as the SPF scope. Reporters in the wild add their own namespaces and prefixes
// (Microsoft's reports carry xsi/xsd), so prefixes are stripped and unknown elements ignored.
//
// Hostile XML: a report never needs a DOCTYPE, so a document with one (or an ENTITY declaration) is refused
// before parsing, and the parser's entity processing is off: no entity expansion can happen (billion laughs).
// The five predefined entities and character references are decoded by hand, once, without recursion.
import { isIP } from 'node:net';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export type DmarcPolicyPublished = {
  domain: string;
  p: string;
  sp: string | null;
  np: string | null;
  adkim: string | null;
  aspf: string | null;
  /** RFC 7489 only (RFC 9989 dropped it). */
  pct: number | null;
  /** RFC 9990 only: the `t` tag (`y` or `n`). */
  testing: string | null;
  fo: string | null;
  /** RFC 9990 only: `psl` or `treewalk`. */
  discovery_method: string | null;
};

export type DmarcRecord = {
  source_ip: string;
  count: number;
  /** `none`, `quarantine` or `reject` (what the receiver did). */
  disposition: string;
  /** DMARC's aligned DKIM and SPF results: `pass` or `fail`. */
  dkim: string;
  spf: string;
  reasons: { type: string; comment: string | null }[];
  header_from: string;
  envelope_from: string | null;
  envelope_to: string | null;
  dkim_results: { domain: string; selector: string | null; result: string }[];
  spf_results: { domain: string; scope: string | null; result: string }[];
};

export type DmarcAggregateReport = {
  /** `rfc9990` when the root element is in the DMARC 2.0 namespace, else `rfc7489`. */
  format: 'rfc9990' | 'rfc7489';
  org_name: string;
  org_email: string;
  report_id: string;
  begin: Date;
  end: Date;
  errors: string[];
  policy: DmarcPolicyPublished;
  records: DmarcRecord[];
};

export type ReportRefusal = 'doctype' | 'malformed' | 'too_many_records';

export type ReportParse =
  | { ok: true; report: DmarcAggregateReport }
  | { ok: false; reason: ReportRefusal; detail: string };

/** A root element in RFC 9990's namespace (`<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0">`, or prefixed). */
const DMARC_2_ROOT = /<(?:[A-Za-z_][\w.-]*:)?feedback\b[^>]*=\s*["']urn:ietf:params:xml:ns:dmarc-2\.0["']/;

/** The elements that may repeat; everything else is read as one. */
const REPEATED = new Set([
  'feedback.record',
  'feedback.report_metadata.error',
  'feedback.record.row.policy_evaluated.reason',
  'feedback.record.auth_results.dkim',
  'feedback.record.auth_results.spf',
]);

/** The longest text kept of a free-text field (an org name, an error, a comment). */
const MAX_TEXT = 500;

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // A report is six levels deep; a document nested far deeper is not one.
  maxNestedTags: 32,
  jPath: true,
  isArray: (_name, jPath) => REPEATED.has(jPath as string),
});

/**
 * Reads one aggregate report. `maxRecords`: more `<record>` elements than this and the report is refused
 * whole (counting stops short of parsing a document that would build millions of objects).
 *
 * @example
 * const parsed = parseAggregateReport(xml, { maxRecords: 20_000 });
 * if (parsed.ok) parsed.report.policy.domain; // 'example.com'
 */
export function parseAggregateReport(xml: string, limits: { maxRecords: number }): ReportParse {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) return refuse('doctype', 'a DOCTYPE or ENTITY declaration');
  let records = 0;
  for (const _ of xml.matchAll(/<(?:[A-Za-z_][\w.-]*:)?record[\s>]/g)) {
    if (++records > limits.maxRecords) return refuse('too_many_records', `more than ${limits.maxRecords} records`);
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) return refuse('malformed', `XML: ${valid.err.msg} (line ${valid.err.line})`);
  let doc: unknown;
  try {
    doc = parser.parse(xml);
  } catch (err) {
    return refuse('malformed', `XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return { ok: true, report: reportOf(doc, DMARC_2_ROOT.test(xml) ? 'rfc9990' : 'rfc7489') };
  } catch (err) {
    if (err instanceof ShapeError) return refuse('malformed', err.message);
    throw err;
  }
}

class ShapeError extends Error {}

function refuse(reason: ReportRefusal, detail: string): ReportParse {
  return { ok: false, reason, detail };
}

type Node = Record<string, unknown>;

function reportOf(doc: unknown, format: DmarcAggregateReport['format']): DmarcAggregateReport {
  const feedback = node(node(doc, 'document').feedback, 'feedback');
  const metadata = node(feedback.report_metadata, 'report_metadata');
  const range = node(metadata.date_range, 'date_range');
  const begin = epoch(range.begin, 'date_range/begin');
  const end = epoch(range.end, 'date_range/end');
  if (end < begin) throw new ShapeError('date_range ends before it begins');
  // A report covers a period that has ended; a day's slack for clocks. One dated later is forged or broken,
  // and, kept by the end of its period, would outlive every retention.
  if (end.getTime() > Date.now() + 86_400_000) throw new ShapeError('date_range ends in the future');
  const version = optionalText(feedback.version);
  if (version !== null && !/^\d+(\.\d+)?$/.test(version)) throw new ShapeError(`version ${version}`);
  const records = list(feedback.record).map((record, i) => recordOf(node(record, `record ${i + 1}`), i + 1));
  if (records.length === 0) throw new ShapeError('no record');
  return {
    format,
    org_name: requiredText(metadata.org_name, 'org_name'),
    org_email: requiredText(metadata.email, 'email'),
    report_id: requiredText(metadata.report_id, 'report_id'),
    begin,
    end,
    errors: list(metadata.error).map((error) => clip(textOf(error) ?? '')),
    policy: policyOf(node(feedback.policy_published, 'policy_published')),
    records,
  };
}

function policyOf(policy: Node): DmarcPolicyPublished {
  const pct = optionalText(policy.pct);
  if (pct !== null && !/^\d{1,3}$/.test(pct)) throw new ShapeError(`policy_published/pct ${pct}`);
  return {
    domain: domainName(requiredText(policy.domain, 'policy_published/domain'), 'policy_published/domain'),
    p: keyword(requiredText(policy.p, 'policy_published/p'), 'policy_published/p'),
    sp: optionalKeyword(policy.sp, 'sp'),
    np: optionalKeyword(policy.np, 'np'),
    adkim: optionalKeyword(policy.adkim, 'adkim'),
    aspf: optionalKeyword(policy.aspf, 'aspf'),
    pct: pct === null ? null : Number(pct),
    testing: optionalKeyword(policy.testing, 'testing'),
    fo: optionalText(policy.fo) === null ? null : clip(optionalText(policy.fo)!, 32),
    discovery_method: optionalKeyword(policy.discovery_method, 'discovery_method'),
  };
}

function recordOf(record: Node, n: number): DmarcRecord {
  const at = `record ${n}`;
  const row = node(record.row, `${at}/row`);
  const evaluated = node(row.policy_evaluated, `${at}/policy_evaluated`);
  const identifiers = node(record.identifiers, `${at}/identifiers`);
  const auth = record.auth_results === undefined || record.auth_results === '' ? {} : node(record.auth_results, at);
  const sourceIp = requiredText(row.source_ip, `${at}/source_ip`);
  if (isIP(sourceIp) === 0) throw new ShapeError(`${at}/source_ip ${clip(sourceIp, 60)} is not an IP address`);
  const count = requiredText(row.count, `${at}/count`);
  // Beyond 10^12 messages in one row is no real report; the bound keeps the sums exact as JS numbers.
  if (!/^\d{1,12}$/.test(count)) throw new ShapeError(`${at}/count ${clip(count, 20)}`);
  const envelopeFrom = optionalText(identifiers.envelope_from);
  return {
    source_ip: sourceIp,
    count: Number(count),
    disposition: keyword(requiredText(evaluated.disposition, `${at}/disposition`), `${at}/disposition`),
    dkim: passOrFail(evaluated.dkim, `${at}/policy_evaluated/dkim`),
    spf: passOrFail(evaluated.spf, `${at}/policy_evaluated/spf`),
    reasons: list(evaluated.reason).map((reason) => {
      const r = node(reason, `${at}/reason`);
      const comment = optionalText(r.comment);
      return {
        type: keyword(requiredText(r.type, `${at}/reason/type`), `${at}/reason/type`),
        comment: comment && clip(comment),
      };
    }),
    header_from: domainName(requiredText(identifiers.header_from, `${at}/header_from`), `${at}/header_from`),
    envelope_from: envelopeFrom === null ? null : clip(envelopeFrom, 255).toLowerCase(),
    envelope_to: optionalText(identifiers.envelope_to) && clip(optionalText(identifiers.envelope_to)!, 255),
    dkim_results: list(auth.dkim).map((dkim) => {
      const d = node(dkim, `${at}/auth_results/dkim`);
      const selector = optionalText(d.selector);
      return {
        domain: clip(requiredText(d.domain, `${at}/auth_results/dkim/domain`), 255).toLowerCase(),
        selector: selector && clip(selector, 255),
        result: keyword(requiredText(d.result, `${at}/auth_results/dkim/result`), `${at}/dkim/result`),
      };
    }),
    spf_results: list(auth.spf).map((spf) => {
      const s = node(spf, `${at}/auth_results/spf`);
      const scope = optionalText(s.scope);
      return {
        // Empty when the message had a null reverse-path and the receiver reported nothing for HELO.
        domain: clip(optionalText(s.domain) ?? '', 255).toLowerCase(),
        scope: scope && keyword(scope, `${at}/spf/scope`),
        result: keyword(requiredText(s.result, `${at}/auth_results/spf/result`), `${at}/spf/result`),
      };
    }),
  };
}

function node(value: unknown, what: string): Node {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ShapeError(`no ${what} element`);
  return value as Node;
}

function list(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** An element's text: a leaf is a string; an element with attributes only (`xsi:nil`) is an object. */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return decodeEntities(value);
  if (typeof value === 'number') return String(value);
  if (value && typeof value === 'object' && '#text' in value) return textOf((value as Node)['#text']);
  return null;
}

function optionalText(value: unknown): string | null {
  const text = value === undefined ? null : textOf(value);
  return text === null || text === '' ? null : text;
}

function requiredText(value: unknown, what: string): string {
  const text = optionalText(value);
  if (text === null) throw new ShapeError(`no ${what}`);
  return clip(text);
}

function keyword(value: string, what: string): string {
  const word = value.trim().toLowerCase();
  if (!/^[a-z0-9_.-]{1,40}$/.test(word)) throw new ShapeError(`${what} ${clip(value, 40)} is not a keyword`);
  return word;
}

function optionalKeyword(value: unknown, what: string): string | null {
  const text = optionalText(value);
  return text === null ? null : keyword(text, `policy_published/${what}`);
}

function passOrFail(value: unknown, what: string): string {
  const word = keyword(requiredText(value, what), what);
  // Some reporters write `softfail`/`none`/`neutral` where DMARC's aligned result is meant: none of them pass.
  return word === 'pass' ? 'pass' : 'fail';
}

function domainName(value: string, what: string): string {
  const name = value.trim().toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9_]([a-z0-9_-]{0,62}\.?)*[a-z0-9-]$/.test(name) || name.length > 253 || !name.includes('.'))
    throw new ShapeError(`${what} ${clip(value, 60)} is not a domain name`);
  return name;
}

function epoch(value: unknown, what: string): Date {
  const text = requiredText(value, what);
  // Seconds since the epoch; some reporters send a fraction.
  if (!/^\d{1,11}(\.\d+)?$/.test(text)) throw new ShapeError(`${what} ${clip(text, 30)} is not a timestamp`);
  return new Date(Math.floor(Number(text)) * 1000);
}

function clip(text: string, max = MAX_TEXT): string {
  return text.length > max ? text.slice(0, max) : text;
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The predefined entities and character references, decoded once (never recursively: `&amp;lt;` → `&lt;`). */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(lt|gt|amp|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (whole, name: string) => {
    if (name[0] !== '#') return NAMED[name]!;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

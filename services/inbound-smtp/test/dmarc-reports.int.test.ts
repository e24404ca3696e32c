// DMARC aggregate reports end to end: nodemailer as the reporters' MTAs (Google's zip, Microsoft's and Yahoo's
// gzip, Mail.ru's zip, Fastmail's plain RFC 9990 XML) → the real MX at the domain's report address → the
// figures read through the real gateway (`GET /domains/{id}/dmarc-reports`, its responses checked against
// the OpenAPI document); hostile reports (an XML bomb, a gzip bomb, broken XML, a report about a domain
// not ours) dropped and counted on the inbound-smtp's /metrics, the MX answering the next message.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { gzipSync, zipSync } from 'fflate';
import nodemailer from 'nodemailer';
import type { Resend } from 'resend';
import { createDb } from '@postline/platform';
import { dataOf, rcptReply, testResend, uniqueDomain, useSystem, waitFor, type SharedSystem } from '@postline/testing';

import { SCHEMA } from '../src/config.ts';
import type { InboundDb } from '../src/db/schema.ts';

jest.setTimeout(90_000);

let system: SharedSystem;
let resend: Resend;
let apiKey: string;
let strangerKey: string;
let domain: { id: string; name: string };
let reportAddress: string;

const world = useSystem();

const DAY_MS = 86_400_000;
/** The UTC day the fixtures' periods begin (1795737600), and the day this run files them under: a week ago, so
 * that the reports are recent (the retention job drops reports whose period ended more than 90 days ago). */
const FIXTURE_DAY = Date.UTC(2026, 10, 27);
const REPORT_DAY = Math.floor(Date.now() / DAY_MS) * DAY_MS - 7 * DAY_MS;
const utcDay = (offsetDays: number) => new Date(REPORT_DAY + offsetDays * DAY_MS).toISOString().slice(0, 10);

/**
 * A fixture report about this file's domain (the fixtures name `dmarc-test.example.com`), edited by `edit` if
 * given, its period moved by whole days to REPORT_DAY.
 */
function fixture(name: string, edit: (xml: string) => string = (xml) => xml): Buffer {
  const xml = edit(readFileSync(new URL(`./fixtures/dmarc/${name}`, import.meta.url), 'utf8'));
  const shift = (REPORT_DAY - FIXTURE_DAY) / 1000;
  return Buffer.from(
    xml
      .replaceAll('dmarc-test.example.com', domain.name)
      .replace(/<(begin|end)>(\d+)<\/\1>/g, (_, tag: string, at: string) => `<${tag}>${Number(at) + shift}</${tag}>`),
  );
}

const reporter = (name: string) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp.mx,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    name,
  });

type Attachment = { filename: string; content: Buffer | Uint8Array; contentType: string };

/** A report message as reporters send it: a short text and the report files attached. */
async function sendReport(from: string, attachments: Attachment[]): Promise<string> {
  const info = await reporter(from.split('@')[1]!).sendMail({
    envelope: { from, to: [reportAddress] },
    from,
    to: reportAddress,
    subject: `Report Domain: ${domain.name} Submitter: ${from.split('@')[1]} Report-ID: <${Date.now()}>`,
    text: 'This is an aggregate report from a receiver.',
    attachments: attachments.map((a) => ({ ...a, content: Buffer.from(a.content) })),
  });
  return info.response;
}

async function get(path: string, key = apiKey): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const PERIOD = `from=${utcDay(-7)}&to=${utcDay(8)}`;
const reports = () => get(`/domains/${domain.id}/dmarc-reports?${PERIOD}`);

/** The inbound-smtp's `inbound_dmarc_reports_total` by outcome. */
async function outcomes(): Promise<Record<string, number>> {
  const text = await (await fetch(`${system.services['inbound-smtp'].url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^inbound_dmarc_reports_total\{[^}]*outcome="([a-z_]+)"[^}]*\} (\d+)/gm))
    counts[m[1]!] = Number(m[2]);
  return counts;
}

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v !== (before[k] ?? 0)) out[k] = v - (before[k] ?? 0);
  return out;
}

beforeAll(async () => {
  ({ system } = world);
  apiKey = String((await system.admin('team', 'create', '--name', 'DMARC reports')).api_key);
  strangerKey = String((await system.admin('team', 'create', '--name', 'DMARC stranger')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  const name = uniqueDomain('dmarc');
  domain = { id: dataOf(await resend.domains.create({ name })).id, name };
  // The MX learns of the domain from its state message: the report route answers once it has.
  await waitFor('the domain in the MX read model', async () => (await reports()).status === 200);
  reportAddress = String((await reports()).body.report_address);
}, 90_000);

describe('DMARC aggregate reports at the MX', () => {
  it('suggests a monitoring record naming the report address at our MX host, a token of the domain in it', async () => {
    const { body } = await reports();
    const hex = domain.id.replaceAll('-', '');
    expect(reportAddress).toMatch(new RegExp(`^dmarc\\+${hex}@[^@]+$`));
    expect(body.suggested_record).toEqual({
      name: `_dmarc.${domain.name}`,
      type: 'TXT',
      value: `v=DMARC1; p=none; rua=mailto:${reportAddress};`,
    });
    expect(body.totals).toEqual({
      reports: 0,
      messages: 0,
      dmarc_pass: 0,
      dmarc_fail: 0,
      spf_aligned: 0,
      dkim_aligned: 0,
    });
  });

  it('stores the reports of five organisations (zip, gzip, several in one message, RFC 9990) and sums them', async () => {
    const before = await outcomes();
    const google = `google.com!${domain.name}!1795737600!1795823999.zip`;
    const responses = [
      await sendReport('noreply-dmarc-support@google.com', [
        {
          filename: google,
          content: zipSync({ [google.replace('.zip', '.xml')]: fixture('google.xml') }),
          contentType: 'application/zip',
        },
      ]),
      await sendReport('dmarcreport@microsoft.com', [
        {
          filename: `enterprise.protection.outlook.com!${domain.name}!1795737600!1795824000.xml.gz`,
          content: gzipSync(fixture('microsoft.xml')),
          contentType: 'application/gzip',
        },
      ]),
      // Two reports in one message: a gzip sent as octet-stream and a zip as Windows names it.
      await sendReport('dmarc-reports@relay.example.net', [
        { filename: 'yahoo.xml.gz', content: gzipSync(fixture('yahoo.xml')), contentType: 'application/octet-stream' },
        {
          filename: 'mailru.zip',
          content: zipSync({ 'mailru.xml': fixture('mailru.xml') }),
          contentType: 'application/x-zip-compressed',
        },
      ]),
      await sendReport('dmarc-reports@fastmail.com', [
        { filename: 'fastmail.xml', content: fixture('fastmail-rfc9990.xml'), contentType: 'text/xml' },
      ]),
    ];
    // Accepted after the commit, and never as a received email of the team (no id queued).
    for (const response of responses) expect(response).toMatch(/^250 2\.0\.0 Ok: queued$/);
    expect(delta(before, await outcomes())).toEqual({ stored: 5 });

    const { status, body } = await reports();
    expect(status).toBe(200);
    expect(body.totals).toEqual({
      reports: 5,
      messages: 211,
      dmarc_pass: 194,
      dmarc_fail: 17,
      spf_aligned: 154,
      dkim_aligned: 194,
    });
    expect(body.days).toEqual([
      { date: utcDay(0), messages: 211, dmarc_pass: 194, dmarc_fail: 17, spf_aligned: 154, dkim_aligned: 194 },
    ]);
    const sources = body.sources as {
      source_ip: string;
      messages: number;
      dmarc_fail: number;
      failing: boolean;
      org_names: string[];
    }[];
    expect(sources.map((s) => [s.source_ip, s.messages, s.dmarc_fail, s.failing])).toEqual([
      ['203.0.113.10', 169, 0, false],
      ['203.0.113.11', 25, 0, false],
      ['192.0.2.66', 7, 7, true],
      ['2001:db8::25', 7, 7, true],
      ['198.51.100.77', 3, 3, true],
    ]);
    expect(sources[2]!.org_names).toEqual(['Fastmail Pty Ltd', 'Mail.Ru']);
    const organizations = body.organizations as { org_name: string; reports: number; messages: number }[];
    expect(organizations.map((o) => [o.org_name, o.reports, o.messages])).toEqual([
      ['google.com', 1, 123],
      ['Enterprise Outlook', 1, 47],
      ['Yahoo', 1, 25],
      ['Fastmail Pty Ltd', 1, 14],
      ['Mail.Ru', 1, 2],
    ]);
    const list = body.reports as { org_name: string; format: string; records: number; policy: { np: string | null } }[];
    expect(list).toHaveLength(5);
    expect(list.find((r) => r.org_name === 'Fastmail Pty Ltd')).toMatchObject({
      format: 'rfc9990',
      records: 2,
      policy: { np: 'reject' },
    });
    // No received email came of them.
    expect(dataOf(await resend.emails.receiving.list()).data).toEqual([]);
  });

  it('counts a report sent again once', async () => {
    const before = await outcomes();
    const response = await sendReport('noreply-dmarc-support@google.com', [
      {
        filename: 'google.xml.zip',
        content: zipSync({ 'google.xml': fixture('google.xml') }),
        contentType: 'application/zip',
      },
    ]);
    expect(response).toMatch(/^250 /);
    expect(delta(before, await outcomes())).toEqual({ duplicate: 1 });
    expect((await reports()).body.totals).toMatchObject({ reports: 5, messages: 211 });
  });

  it('drops an XML bomb, a gzip bomb, broken XML and a report about another domain, keeping the good one beside them', async () => {
    const before = await outcomes();
    const nextDay = fixture('yahoo.xml', (xml) =>
      xml
        .replace('1795824000.551234', '1795910400.100001')
        .replace('<begin>1795737600</begin>', '<begin>1795824000</begin>')
        .replace('<end>1795823999</end>', '<end>1795910399</end>'),
    );
    const response = await sendReport('attacker@example.net', [
      { filename: 'laughs.xml', content: fixture('billion-laughs.xml'), contentType: 'text/xml' },
      // 64 MiB of zeros once inflated: past the 20 MiB cap, stopped there.
      {
        filename: 'bomb.xml.gz',
        content: gzipSync(new Uint8Array(64 * 1024 * 1024), { level: 9 }),
        contentType: 'application/gzip',
      },
      { filename: 'broken.xml', content: fixture('malformed.xml'), contentType: 'application/xml' },
      {
        filename: 'victim.zip',
        content: zipSync({ 'victim.xml': fixture('foreign-domain.xml') }),
        contentType: 'application/zip',
      },
      { filename: 'yahoo-next-day.xml.gz', content: gzipSync(Buffer.from(nextDay)), contentType: 'application/gzip' },
    ]);
    expect(response).toMatch(/^250 /);
    expect(delta(before, await outcomes())).toEqual({
      doctype: 1,
      too_large: 1,
      malformed: 1,
      foreign_domain: 1,
      stored: 1,
    });
    const { body } = await reports();
    expect(body.totals).toMatchObject({ reports: 6, messages: 236 });
    expect((body.days as { date: string }[]).map((d) => d.date)).toEqual([utcDay(0), utcDay(1)]);
    expect(JSON.stringify(body)).not.toContain('victim.example.org');
    // The MX is still up and takes the next report address.
    expect((await rcptReply(system.smtp.mx, reportAddress)).code).toBe(250);
  });

  it('refuses at RCPT an address at our host that is no domain’s report address', async () => {
    const host = reportAddress.split('@')[1]!;
    const before = await outcomes();
    const unknown = await rcptReply(system.smtp.mx, `dmarc+${'0'.repeat(32)}@${host}`);
    expect(unknown.code).toBe(550);
    expect(unknown.text).toMatch(/^5\.1\.1 /);
    expect((await rcptReply(system.smtp.mx, `postmaster@${host}`)).code).toBe(550);
    expect(delta(before, await outcomes())).toEqual({ unknown_address: 2 });
  });

  it("answers 404 for another team's domain or an unknown id, and 422 for a period that ends before it begins", async () => {
    expect((await get(`/domains/${domain.id}/dmarc-reports`, strangerKey)).status).toBe(404);
    expect((await get(`/domains/00000000-0000-7000-8000-000000000000/dmarc-reports`)).status).toBe(404);
    expect((await get(`/domains/not-an-id/dmarc-reports`)).status).toBe(404);
    const backwards = await get(`/domains/${domain.id}/dmarc-reports?from=2026-12-01&to=2026-11-01`);
    expect(backwards).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect((await get(`/domains/${domain.id}/dmarc-reports?from=yesterday`)).status).toBe(422);
  });

  it("refuses a deleted domain's report address, and its reports are gone with it", async () => {
    dataOf(await resend.domains.remove(domain.id));
    await waitFor('the MX to refuse the deleted domain’s address', async () => {
      return (await rcptReply(system.smtp.mx, reportAddress)).code === 550;
    });
    expect((await reports()).status).toBe(404);
    const { db } = createDb<InboundDb>({ url: String(system.env.DATABASE_URL), schema: SCHEMA, max: 1 });
    try {
      const left = await db.selectFrom('dmarc_reports').select('id').where('domain_id', '=', domain.id).execute();
      expect(left).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

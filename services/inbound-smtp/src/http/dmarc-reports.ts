// GET /domains/{id}/dmarc-reports (a Postline extension; the gateway forwards this one path under /domains
// here, where the reports are received and kept): a domain's aggregate reports summed over a period.
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, type ApiShape } from '@postline/contracts';
import { isUuid, notFound, parseInput, route, teamOf, validationError } from '@postline/platform';
import { findLiveDomain } from '../db/receiving-domains.ts';
import type { InboundDb } from '../db/schema.ts';
import { reportAddressOf, suggestedDmarcRecord } from '../domain/dmarc-report-address.ts';
import {
  dmarcByDay,
  dmarcByOrganization,
  dmarcBySource,
  dmarcReportList,
  dmarcTotals,
  type DmarcPeriod,
} from '../db/dmarc-reports.ts';

export type DmarcReportDeps = { db: Kysely<InboundDb>; now: () => Date; mxHost: string };

const DAY_MS = 86_400_000;
/** The period when none is asked for, and the longest one answered. */
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;
/** Rows of each list: a domain sent through many sources shows its largest ones. */
const MAX_SOURCES = 200;
const MAX_ORGANIZATIONS = 100;
const MAX_REPORTS = 100;

export function dmarcReportRoutes(deps: DmarcReportDeps): Router {
  const router = Router();
  route(router, '/domains/:id/dmarc-reports', {
    get: async (req, res) => {
      const teamId = teamOf(res);
      const id = req.params.id;
      const domain = id && isUuid(id) ? await findLiveDomain(deps.db, id) : undefined;
      if (!domain || domain.team_id !== teamId) throw notFound('Domain not found');
      const query = parseInput(ApiRequests.DmarcReportQuery, req.query);
      const to = query.to ? new Date(query.to) : deps.now();
      const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
      if (from >= to) throw validationError('`from` must be before `to`.');
      if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS)
        throw validationError(`The period may span at most ${MAX_DAYS} days.`);
      const period: DmarcPeriod = { teamId, domainId: domain.domain_id, from, to };
      const [totals, days, sources, organizations, reports] = await Promise.all([
        dmarcTotals(deps.db, period),
        dmarcByDay(deps.db, period),
        dmarcBySource(deps.db, period, MAX_SOURCES),
        dmarcByOrganization(deps.db, period, MAX_ORGANIZATIONS),
        dmarcReportList(deps.db, period, MAX_REPORTS),
      ]);
      const body: ApiShape<'DmarcReports'> = {
        object: 'dmarc_reports',
        domain_id: domain.domain_id,
        domain: domain.name,
        from: from.toISOString(),
        to: to.toISOString(),
        report_address: reportAddressOf(domain.domain_id, deps.mxHost),
        suggested_record: suggestedDmarcRecord(domain.name, domain.domain_id, deps.mxHost),
        totals,
        days,
        sources: sources.map((source) => ({ ...source, failing: source.dmarc_fail > 0 })),
        organizations,
        reports: reports.map((report) => ({
          id: report.id,
          org_name: report.org_name,
          org_email: report.org_email,
          report_id: report.report_id,
          format: report.format === 'rfc9990' ? 'rfc9990' : 'rfc7489',
          begin: report.begin_at.toISOString(),
          end: report.end_at.toISOString(),
          received_at: report.received_at.toISOString(),
          policy_domain: report.policy_domain,
          policy: report.policy,
          errors: report.errors,
          records: report.record_count,
          messages: Number(report.message_count),
          dmarc_pass: report.dmarc_pass,
          dmarc_fail: report.dmarc_fail,
        })),
      };
      res.json(body);
    },
  });
  return router;
}

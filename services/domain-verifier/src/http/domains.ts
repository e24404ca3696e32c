import { Router } from 'express';
import type { z } from 'zod';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { ApiError, formatTimestamp, isUuid, notFound, parseInput, route, teamOf } from '@postline/platform';
import { findDomain, listDomains, recordStates, type RecordStates } from '../db/domains.ts';
import type { DomainRow } from '../db/schema.ts';
import { checkDomainName } from '../domain/names.ts';
import { apiRecord, capabilitiesOf, recordSpecsOf } from '../domain/records.ts';
import { checkDomainNow, type CheckDeps } from '../use-cases/check-domain.ts';
import { claimBody, CLAIM_NOT_FOUND, createClaim, readClaim, verifyClaim } from '../use-cases/claims.ts';
import {
  createDomain,
  patchDomain,
  removeDomain,
  type DomainPatch,
  type ManageDomainsDeps,
  type NewDomain,
} from '../use-cases/domains.ts';

export type DomainRouteDeps = ManageDomainsDeps & CheckDeps;

const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'] as const;

const { ClaimDomainBody, CreateDomainBody, UpdateDomainBody } = ApiRequests;

/** `/domains` and its claims as in Resend's API reference: the team comes from the gateway's header. */
export function domainRoutes(deps: DomainRouteDeps): Router {
  const router = Router();
  route(router, '/domains/claim', {
    post: async (req, res) => {
      const input = newDomainInput(parseInput(ClaimDomainBody, req.body));
      const { claim, created } = await createClaim(deps, teamOf(res), input);
      res.status(created ? 201 : 200).json(claimBody(claim, formatTimestamp));
    },
  });
  route(router, '/domains/:id/claim', {
    get: async (req, res) => {
      const claim = await readClaim(deps, teamOf(res), claimDomainId(req.params.id));
      res.json(claimBody(claim, formatTimestamp));
    },
  });
  route(router, '/domains/:id/claim/verify', {
    post: async (req, res) => {
      const claim = await verifyClaim(deps, teamOf(res), claimDomainId(req.params.id));
      res.json(claimBody(claim, formatTimestamp));
    },
  });
  route(router, '/domains', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const { domain, states } = await createDomain(
        deps,
        teamId,
        newDomainInput(parseInput(CreateDomainBody, req.body)),
      );
      const { object: _object, ...created } = domainBody(deps, domain, states);
      res.status(201).json(created);
    },
    get: async (req, res) => {
      const teamId = teamOf(res);
      const page = await listDomains(deps.db, teamId, parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });
  route(router, '/domains/:id', {
    get: async (req, res) => {
      const teamId = teamOf(res);
      const domain = await findDomain(deps.db, teamId, domainId(req.params.id));
      if (!domain) throw notFound('Domain not found');
      res.json(domainBody(deps, domain, await recordStates(deps.db, domain.id)));
    },
    patch: async (req, res) => {
      const teamId = teamOf(res);
      const id = domainId(req.params.id);
      const body = parseInput(UpdateDomainBody, req.body);
      const patch: DomainPatch = {
        openTracking: body.open_tracking ?? undefined,
        clickTracking: body.click_tracking ?? undefined,
        trackingSubdomain: body.tracking_subdomain === '' ? null : body.tracking_subdomain?.toLowerCase(),
        tls: body.tls ?? undefined,
        sending: body.capabilities?.sending ? body.capabilities.sending === 'enabled' : undefined,
        receiving: body.capabilities?.receiving ? body.capabilities.receiving === 'enabled' : undefined,
      };
      if (!(await patchDomain(deps, teamId, id, patch))) throw notFound('Domain not found');
      res.json({ object: 'domain', id });
    },
    delete: async (req, res) => {
      const teamId = teamOf(res);
      const id = domainId(req.params.id);
      if (!(await removeDomain(deps, teamId, id))) throw notFound('Domain not found');
      res.json({ object: 'domain', id, deleted: true });
    },
  });
  route(router, '/domains/:id/verify', {
    // Checks now and answers once the outcome is stored, so a GET right after shows it.
    post: async (req, res) => {
      const teamId = teamOf(res);
      const id = domainId(req.params.id);
      if (!(await checkDomainNow(deps, teamId, id))) throw notFound('Domain not found');
      res.json({ object: 'domain', id });
    },
  });
  return router;
}

/** A create (or claim) body checked: the name, the region, the capabilities; what createDomain takes. */
function newDomainInput(body: z.infer<typeof CreateDomainBody>): NewDomain {
  const checked = checkDomainName(body.name);
  if (!checked.ok) throw new ApiError(422, 'validation_error', checked.message);
  const region = body.region ?? 'us-east-1';
  if (!(REGIONS as readonly string[]).includes(region)) {
    throw new ApiError(422, 'invalid_region', `Region must be one of: ${REGIONS.join(', ')}.`);
  }
  const sending = (body.capabilities?.sending ?? 'enabled') === 'enabled';
  const receiving = (body.capabilities?.receiving ?? 'disabled') === 'enabled';
  if (!sending && !receiving) {
    throw new ApiError(
      422,
      'validation_error',
      'At least one of `capabilities.sending` and `capabilities.receiving` must be enabled.',
    );
  }
  return {
    name: checked.domain.name,
    zone: checked.domain.zone,
    region,
    customReturnPath: (body.custom_return_path ?? 'send').toLowerCase(),
    openTracking: body.open_tracking ?? false,
    clickTracking: body.click_tracking ?? false,
    trackingSubdomain: body.tracking_subdomain ? body.tracking_subdomain.toLowerCase() : null,
    tls: body.tls ?? 'opportunistic',
    sending,
    receiving,
  };
}

/** A claim's domain id: another team's and a malformed one look the same, not found. */
function claimDomainId(id: string | undefined): string {
  if (!id || !isUuid(id)) throw notFound(CLAIM_NOT_FOUND);
  return id;
}

// Another team's domain and a malformed id look the same: not found.
function domainId(id: string | undefined): string {
  if (!id || !isUuid(id)) throw notFound('Domain not found');
  return id;
}

function listItem(domain: DomainRow) {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    created_at: formatTimestamp(domain.created_at),
    region: domain.region,
    open_tracking: domain.open_tracking,
    click_tracking: domain.click_tracking,
    capabilities: capabilitiesOf(domain),
  };
}

function domainBody(deps: DomainRouteDeps, domain: DomainRow, states: RecordStates) {
  return {
    object: 'domain' as const,
    ...listItem(domain),
    ...(domain.tracking_subdomain ? { tracking_subdomain: domain.tracking_subdomain } : {}),
    records: recordSpecsOf(domain, deps.infra).map((spec) => apiRecord(spec, states[spec.kind].status)),
    tls: domain.tls,
  };
}

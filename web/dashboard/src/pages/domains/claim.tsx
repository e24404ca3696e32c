// A claim on a domain another team added (GET /domains/{domain_id}/claim): the TXT record that proves
// control of its DNS, Verify, and what became of the claim. Once completed the domain is this team's, under
// the claim's domain id, with records of its own to publish.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { ApiError, get, post } from '../../api/client.ts';
import { CodeValue } from '../../ui/copy.tsx';
import { ErrorMessage, Loading, Notice, StatusBadge } from '../../ui/feedback.tsx';
import { Time } from '../../ui/time.tsx';
import { DOMAINS } from './model.ts';

type Claim = ApiShape<'DomainClaim'>;

const CLAIM = 'domain-claim';

/** What each ended state means for the reader. */
const ENDED: Partial<Record<Claim['status'], string>> = {
  expired: 'The record was not found within 7 days. Start a new claim from Add domain.',
  superseded: 'A newer claim for this name, with other settings, replaced this one.',
  canceled: 'This claim was canceled.',
  failed: 'This claim failed.',
};

export function ClaimPage() {
  const { domainId = '' } = useParams();
  const claim = useQuery({
    queryKey: [CLAIM, domainId],
    queryFn: () => get<Claim>(`/domains/${encodeURIComponent(domainId)}/claim`),
  });
  if (claim.error) {
    const gone = claim.error instanceof ApiError && claim.error.statusCode === 404;
    return (
      <>
        <h1>Domain claim</h1>
        {gone ? <p>This team has no such claim.</p> : <ErrorMessage error={claim.error} />}
        <Link to="/domains">Back to domains</Link>
      </>
    );
  }
  if (!claim.data) return <Loading />;
  return <ClaimView claim={claim.data} />;
}

function ClaimView({ claim }: { claim: Claim }) {
  const { record } = claim;
  const ended = ENDED[claim.status];
  return (
    <>
      <p>
        <Link to="/domains">Domains</Link>
      </p>
      <div className="page-header">
        <div>
          <h1>Claim {claim.name}</h1>
          <p className="muted">
            <StatusBadge status={claim.status} /> Started <Time value={claim.created_at} />
          </p>
        </div>
        {claim.status === 'pending' ? <VerifyClaim claim={claim} /> : null}
      </div>
      {claim.status === 'completed' ? (
        <Notice tone="success">
          {claim.name} is now this team’s. Publish its new records and verify them on{' '}
          <Link to={`/domains/${claim.domain_id}`}>its page</Link>.
        </Notice>
      ) : null}
      {ended ? <Notice tone="warning">{ended}</Notice> : null}
      {claim.failure_reason ? <ErrorMessage error={claim.failure_reason} /> : null}
      {claim.status === 'pending' ? (
        <section aria-labelledby="claim-record-title" className="section">
          <h2 id="claim-record-title">The record to publish</h2>
          <p>
            Publish this TXT record at <strong>{record.name}</strong>, then press Verify. The claim is open until{' '}
            <Time value={claim.expires_at} />. When it is found, the other team’s domain is deleted and {claim.name} is
            added to this team with a new DKIM key, so its sending records change.
          </p>
          <dl className="facts card">
            <dt>Type</dt>
            <dd>{record.type}</dd>
            <dt>Name</dt>
            <dd>
              <CodeValue value={record.name} label="Copy the claim record's name" />
            </dd>
            <dt>Value</dt>
            <dd>
              <CodeValue value={record.value} label="Copy the claim record's value" />
            </dd>
            <dt>TTL</dt>
            <dd>{record.ttl}</dd>
          </dl>
        </section>
      ) : null}
    </>
  );
}

function VerifyClaim({ claim }: { claim: Claim }) {
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notFound, setNotFound] = useState(false);
  const verify = async () => {
    setBusy(true);
    setError(null);
    setNotFound(false);
    try {
      // Answers once the lookup's outcome is stored: the claim as it now is.
      const after = await post<Claim>(`/domains/${claim.domain_id}/claim/verify`);
      client.setQueryData([CLAIM, claim.domain_id], after);
      if (after.status === 'completed') await client.invalidateQueries({ queryKey: [DOMAINS] });
      setNotFound(after.status === 'pending');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <button type="button" className="button primary" disabled={busy} onClick={() => void verify()}>
        {busy ? 'Checking…' : 'Verify'}
      </button>
      <span role="status" className="muted small-text">
        {notFound ? ' The record was not found yet: DNS changes can take a while to show.' : ''}
      </span>
      <ErrorMessage error={error} />
    </div>
  );
}

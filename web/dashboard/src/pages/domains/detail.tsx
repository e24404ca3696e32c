// One domain: its status, the records to publish (read again every few seconds while a check is still to
// come, so the page follows the verifier by itself), Verify, its tracking, receiving and TLS settings, delete,
// and its DMARC record and reports (dmarc.tsx).
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post } from '../../api/client.ts';
import { ConfirmButton } from '../../ui/dialog.tsx';
import { ErrorMessage, Loading, Notice, StatusBadge } from '../../ui/feedback.tsx';
import { Time } from '../../ui/time.tsx';
import { DOMAIN, DOMAINS, isSettled, POLL_MS, returnPathOf, type Domain, type DomainRef } from './model.ts';
import { DmarcReportsSection, DmarcSuggestion } from './dmarc.tsx';
import { RecordSections } from './records.tsx';
import { CapabilitySettings, TlsSettings, TrackingSettings } from './settings.tsx';

export function DomainPage() {
  const { id = '' } = useParams();
  const domain = useQuery({
    queryKey: [DOMAIN, id],
    queryFn: () => get<Domain>(`/domains/${encodeURIComponent(id)}`),
    // Polls only while the verifier has a check to come; a settled domain changes only when someone acts.
    refetchInterval: (query) => (query.state.data && !isSettled(query.state.data) ? POLL_MS : false),
  });
  if (domain.isPending) return <Loading />;
  if (domain.error) {
    const missing = domain.error instanceof ApiError && domain.error.statusCode === 404;
    return (
      <>
        <p>
          <Link to="/domains">← Domains</Link>
        </p>
        <h1>{missing ? 'Domain not found' : 'Domain'}</h1>
        <ErrorMessage error={domain.error} />
      </>
    );
  }
  return <DomainView domain={domain.data} />;
}

function DomainView({ domain }: { domain: Domain }) {
  const returnPath = returnPathOf(domain);
  const settled = isSettled(domain);
  return (
    <>
      <p>
        <Link to="/domains">← Domains</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="domain-title">{domain.name}</h1>
          <p>
            <StatusBadge status={domain.status} />
          </p>
        </div>
        <div className="actions">
          <VerifyButton domain={domain} />
          <DeleteDomain domain={domain} />
        </div>
      </div>
      {settled ? null : (
        <Notice>
          Checks are under way: this page reads the domain again every {POLL_MS / 1000} seconds until they settle.
          Publish the records below, then press Verify to check at once.
        </Notice>
      )}
      <dl className="facts card">
        <dt>Status</dt>
        <dd>{domain.status.replaceAll('_', ' ')}</dd>
        <dt>Sending</dt>
        <dd>{domain.capabilities.sending}</dd>
        <dt>Receiving</dt>
        <dd>{domain.capabilities.receiving}</dd>
        {returnPath ? (
          <>
            <dt>Return path</dt>
            <dd>
              <code>{returnPath}</code>
            </dd>
          </>
        ) : null}
        <dt>Tracking subdomain</dt>
        <dd>{domain.tracking_subdomain ? <code>{`${domain.tracking_subdomain}.${domain.name}`}</code> : 'None'}</dd>
        <dt>TLS</dt>
        <dd>{domain.tls}</dd>
        <dt>Region</dt>
        <dd>{domain.region}</dd>
        <dt>Added</dt>
        <dd>
          <Time value={domain.created_at} />
        </dd>
      </dl>
      <RecordSections domain={domain} />
      <DmarcSuggestion domain={domain} />
      <TrackingSettings domain={domain} />
      <CapabilitySettings domain={domain} />
      <TlsSettings domain={domain} />
      <DmarcReportsSection domain={domain} />
    </>
  );
}

function VerifyButton({ domain }: { domain: Domain }) {
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [checked, setChecked] = useState(false);
  const verify = async () => {
    setBusy(true);
    setError(null);
    setChecked(false);
    try {
      // Answers once the check's outcome is stored, so the read right after shows it.
      await post<DomainRef>(`/domains/${domain.id}/verify`);
      await client.invalidateQueries({ queryKey: [DOMAIN, domain.id] });
      await client.invalidateQueries({ queryKey: [DOMAINS] });
      setChecked(true);
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
        {checked ? ' Checked just now.' : ''}
      </span>
      <ErrorMessage error={error} />
    </div>
  );
}

function DeleteDomain({ domain }: { domain: Domain }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  return (
    <ConfirmButton
      label="Delete"
      accessibleName={`Delete ${domain.name}`}
      title={`Delete ${domain.name}?`}
      confirmLabel="Delete domain"
      onConfirm={async () => {
        await del<DomainRef & { deleted: true }>(`/domains/${domain.id}`);
        client.removeQueries({ queryKey: [DOMAIN, domain.id] });
        await client.invalidateQueries({ queryKey: [DOMAINS] });
        await navigate('/domains');
      }}
    >
      <p>
        Email can no longer be sent from <strong>{domain.name}</strong>
        {domain.capabilities.receiving === 'enabled' ? ' nor received at it' : ''}. Its DKIM key is deleted: adding the
        domain again gives it a new key and new records to publish.
      </p>
    </ConfirmButton>
  );
}

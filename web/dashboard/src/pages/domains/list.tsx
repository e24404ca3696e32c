// The team's domains with their status, and adding one (its page then shows the records to publish); a name
// another team has added is offered as a claim.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { ApiError, get, post } from '../../api/client.ts';
import { Dialog } from '../../ui/dialog.tsx';
import { EmptyState, ErrorMessage, StatusBadge } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { DOMAINS, type DomainItem } from './model.ts';

/** The regions POST /domains takes (Resend's names; Postline sends from wherever it runs). */
const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'];

export function DomainList() {
  const page = useListPage<DomainItem>(DOMAINS, '/domains');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Domains</h1>
          <p className="muted">Email is sent from, and received at, the domains whose DNS records are verified.</p>
        </div>
        <AddDomain />
      </div>
      <ListTable
        query={page}
        caption="Domains"
        columns={['Domain', 'Status', 'Sending', 'Receiving', 'Region', 'Added']}
        empty={
          <EmptyState title="No domains yet">
            <p>Add the domain you send from; its page then lists the DNS records to publish.</p>
          </EmptyState>
        }
        row={(domain) => (
          <tr key={domain.id}>
            <th scope="row">
              <Link to={`/domains/${domain.id}`}>{domain.name}</Link>
            </th>
            <td>
              <StatusBadge status={domain.status} />
            </td>
            <td>{domain.capabilities.sending}</td>
            <td>{domain.capabilities.receiving}</td>
            <td>{domain.region}</td>
            <td>
              <Time value={domain.created_at} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** The API's refusal of a name that is registered already (by this team or another). */
function isTaken(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 403 && err.message.endsWith('has been registered already.');
}

/** Whether one of the team's own domains has this name (reading its domains until found). */
async function teamHas(name: string): Promise<boolean> {
  const wanted = name.trim().toLowerCase();
  let after: string | undefined;
  for (;;) {
    const page = await get<ApiShape<'DomainList'>>('/domains', { limit: 100, after });
    if (page.data.some((d) => d.name === wanted)) return true;
    if (!page.has_more || page.data.length === 0) return false;
    after = page.data[page.data.length - 1]!.id;
  }
}

function AddDomain() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  // The body of an add refused because another team has the name: what a claim would send.
  const [claimable, setClaimable] = useState<ApiRequest<'ClaimDomainBody'> | null>(null);
  const close = () => {
    setOpen(false);
    setClaimable(null);
  };
  const add = async (data: FormData) => {
    setClaimable(null);
    const body: ApiRequest<'CreateDomainBody'> = { name: text(data, 'name'), region: text(data, 'region') };
    const returnPath = text(data, 'custom_return_path');
    if (returnPath) body.custom_return_path = returnPath;
    if (data.get('receiving') === 'on') body.capabilities = { sending: 'enabled', receiving: 'enabled' };
    try {
      const created = await post<ApiShape<'CreatedDomain'>>('/domains', body);
      await client.invalidateQueries({ queryKey: [DOMAINS] });
      close();
      await navigate(`/domains/${created.id}`);
    } catch (err) {
      // The API refuses a name the team has itself in the same words: only another team's is claimable.
      if (isTaken(err) && !(await teamHas(body.name)))
        setClaimable({ name: body.name, region: body.region, custom_return_path: body.custom_return_path });
      throw err;
    }
  };
  const claim = async () => {
    if (!claimable) return;
    const made = await post<ApiShape<'DomainClaim'>>('/domains/claim', claimable);
    close();
    await navigate(`/domains/claims/${made.domain_id}`);
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Add domain
      </button>
      <Dialog open={open} title="Add domain" onClose={close}>
        <ActionForm action={add} submitLabel="Add" label="Add domain" onCancel={close}>
          <Field
            label="Domain name"
            hint="The domain in your From addresses, or a subdomain of it such as mail.example.com."
          >
            {(p) => <input {...p} name="name" required autoComplete="off" spellCheck={false} />}
          </Field>
          <Field label="Region">
            {(p) => (
              <select {...p} name="region" defaultValue={REGIONS[0]}>
                {REGIONS.map((region) => (
                  <option key={region}>{region}</option>
                ))}
              </select>
            )}
          </Field>
          <Field
            label="Return path"
            hint={
              <>
                The subdomain bounces come back to, where the SPF records go. Leave empty for <code>send</code>.
              </>
            }
          >
            {(p) => <input {...p} name="custom_return_path" placeholder="send" autoComplete="off" spellCheck={false} />}
          </Field>
          <div className="field">
            <label>
              <input type="checkbox" name="receiving" /> Receive email at this domain
            </label>
            <p className="hint">Adds an MX record on the domain itself: mail to any address at it comes to Postline.</p>
          </div>
        </ActionForm>
        {claimable ? <ClaimOffer name={claimable.name} claim={claim} /> : null}
      </Dialog>
    </>
  );
}

/** Under a refused add: the name belongs to another team, and whoever controls its DNS may claim it. */
function ClaimOffer({ name, claim }: { name: string; claim: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await claim();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="claim-offer-title" className="claim-offer">
      <h3 id="claim-offer-title">Claim {name}</h3>
      <p>
        Another team has added <strong>{name}</strong>. If you control its DNS, you can claim it: you publish one TXT
        record, and once it is found the domain moves to this team with a new DKIM key, and the other team loses it.
      </p>
      <ErrorMessage error={error} />
      <div className="actions">
        <button type="button" className="button" disabled={busy} onClick={() => void start()}>
          Claim {name}
        </button>
      </div>
    </section>
  );
}

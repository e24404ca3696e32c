// A domain's settings as PATCH /domains/{id} takes them: open and click tracking with the tracking subdomain,
// and which capabilities (sending, receiving) it has. Each form starts from the stored values and saves them
// in one request.
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { patch } from '../../api/client.ts';
import { Notice } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { DOMAIN, DOMAINS, type Domain, type DomainRef } from './model.ts';

type Body = ApiRequest<'UpdateDomainBody'>;

/** Saves a PATCH and reads the domain again (its records may change: a new tracking subdomain, receiving). */
function useUpdate(domain: Domain) {
  const client = useQueryClient();
  return async (body: Body) => {
    await patch<DomainRef>(`/domains/${domain.id}`, body);
    await client.invalidateQueries({ queryKey: [DOMAIN, domain.id] });
    await client.invalidateQueries({ queryKey: [DOMAINS] });
  };
}

export function TrackingSettings({ domain }: { domain: Domain }) {
  const update = useUpdate(domain);
  const [saved, setSaved] = useState(false);
  const stored = domain.tracking_subdomain ?? '';
  const save = async (data: FormData) => {
    setSaved(false);
    const body: Body = {
      open_tracking: data.get('open_tracking') === 'on',
      click_tracking: data.get('click_tracking') === 'on',
    };
    // Sent only when changed: a new subdomain replaces the tracking records and starts their checks again.
    const subdomain = text(data, 'tracking_subdomain').toLowerCase();
    if (subdomain !== stored) body.tracking_subdomain = subdomain;
    await update(body);
    setSaved(true);
  };
  return (
    <section aria-labelledby="tracking-title" className="section">
      <h2 id="tracking-title">Open and click tracking</h2>
      <div className="card">
        <ActionForm
          key={`${domain.open_tracking}-${domain.click_tracking}-${stored}`}
          action={save}
          submitLabel="Save tracking"
          label="Tracking"
        >
          <p className="hint">
            Opens and clicks are tracked on the tracking subdomain, so only once its records are verified.
          </p>
          <div className="checks">
            <label>
              <input type="checkbox" name="open_tracking" defaultChecked={domain.open_tracking} /> Open tracking
            </label>
            <label>
              <input type="checkbox" name="click_tracking" defaultChecked={domain.click_tracking} /> Click tracking
            </label>
          </div>
          <Field
            label="Tracking subdomain"
            hint={
              <>
                A label such as <code>links</code>, for <code>links.{domain.name}</code>. Leave empty for none.
              </>
            }
          >
            {(p) => (
              <input {...p} name="tracking_subdomain" defaultValue={stored} autoComplete="off" spellCheck={false} />
            )}
          </Field>
        </ActionForm>
        {saved ? <Notice tone="success">Tracking settings saved.</Notice> : null}
      </div>
    </section>
  );
}

export function CapabilitySettings({ domain }: { domain: Domain }) {
  const update = useUpdate(domain);
  const [saved, setSaved] = useState(false);
  const save = async (data: FormData) => {
    setSaved(false);
    const on = (name: string) => (data.get(name) === 'on' ? 'enabled' : 'disabled');
    await update({ capabilities: { sending: on('sending'), receiving: on('receiving') } });
    setSaved(true);
  };
  return (
    <section aria-labelledby="capabilities-title" className="section">
      <h2 id="capabilities-title">Sending and receiving</h2>
      <div className="card">
        <ActionForm
          key={`${domain.capabilities.sending}-${domain.capabilities.receiving}`}
          action={save}
          submitLabel="Save sending and receiving"
          label="Sending and receiving"
        >
          <div className="checks">
            <label>
              <input type="checkbox" name="sending" defaultChecked={domain.capabilities.sending === 'enabled'} />{' '}
              Sending
            </label>
            <label>
              <input type="checkbox" name="receiving" defaultChecked={domain.capabilities.receiving === 'enabled'} />{' '}
              Receiving
            </label>
          </div>
          <p className="hint">
            Receiving adds an MX record on {domain.name} itself: every address at it then comes to Postline, in place of
            the mail host it has now. At least one of the two stays on.
          </p>
        </ActionForm>
        {saved ? <Notice tone="success">Sending and receiving saved.</Notice> : null}
      </div>
    </section>
  );
}

const TLS_CHOICES = [
  {
    value: 'opportunistic',
    label: 'Opportunistic',
    hint: 'Encrypt whenever the receiving server offers STARTTLS; deliver in the clear to one that does not.',
  },
  {
    value: 'enforced',
    label: 'Enforced',
    hint: 'Deliver only over TLS: mail to a server without it bounces instead of going in the clear.',
  },
] as const;

export function TlsSettings({ domain }: { domain: Domain }) {
  const update = useUpdate(domain);
  const [saved, setSaved] = useState(false);
  const save = async (data: FormData) => {
    setSaved(false);
    await update({ tls: text(data, 'tls') === 'enforced' ? 'enforced' : 'opportunistic' });
    setSaved(true);
  };
  return (
    <section aria-labelledby="tls-title" className="section">
      <h2 id="tls-title">Delivery encryption</h2>
      <div className="card">
        <ActionForm key={domain.tls} action={save} submitLabel="Save encryption" label="Delivery encryption">
          <fieldset className="choices">
            <legend>TLS to receiving servers</legend>
            {TLS_CHOICES.map((choice) => (
              <label key={choice.value}>
                <input type="radio" name="tls" value={choice.value} defaultChecked={domain.tls === choice.value} />{' '}
                {choice.label}
                <span className="hint">{choice.hint}</span>
              </label>
            ))}
          </fieldset>
        </ActionForm>
        {saved ? <Notice tone="success">Delivery encryption saved.</Notice> : null}
      </div>
    </section>
  );
}

// One received message: who sent it and to whom, the SPF, DKIM and DMARC verdicts, its attachments and the
// whole message to download, its headers, and its content: a sandboxed preview of its HTML (the page its raw
// message's link serves with `view=html`; remote images off until asked), the HTML source and the text.
import { Link, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { ApiError, get } from '../../api/client.ts';
import { CodeValue, PartSource } from '../../ui/copy.tsx';
import { Badge, ErrorMessage, Loading } from '../../ui/feedback.tsx';
import { EmailFrame } from '../../ui/email-frame.tsx';
import { HeaderFields } from '../../ui/header-fields.tsx';
import { formatSize } from '../../ui/size.ts';
import { Tabs } from '../../ui/tabs.tsx';
import { Time } from '../../ui/time.tsx';

type Received = ApiShape<'ReceivedEmail'>;
type Attachment = ApiShape<'AttachmentList'>['data'][number];

export function ReceivedPage() {
  const { id = '' } = useParams();
  const email = useQuery({
    queryKey: ['received', id],
    queryFn: () => get<Received>(`/emails/receiving/${encodeURIComponent(id)}`),
  });
  if (email.error) {
    const gone = email.error instanceof ApiError && email.error.statusCode === 404;
    return (
      <>
        <h1>{gone ? 'Email not found' : 'Received email'}</h1>
        <ErrorMessage error={email.error} />
        <Link to="/received">Back to received mail</Link>
      </>
    );
  }
  if (!email.data) return <Loading />;
  return <ReceivedView email={email.data} />;
}

/** A verdict as its badge: pass is good, fail bad, anything else (none, neutral, softfail…) a warning. */
function Verdict({ name, value }: { name: string; value: string | null }) {
  const tone = value === 'pass' ? 'good' : value === 'fail' ? 'bad' : 'warn';
  return (
    <>
      <dt>{name}</dt>
      <dd>{value ? <Badge tone={tone}>{value}</Badge> : <span className="muted">not recorded</span>}</dd>
    </>
  );
}

function ReceivedView({ email }: { email: Received }) {
  return (
    <>
      <p>
        <Link to="/received">← Received</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="break-anywhere">{email.subject || '(no subject)'}</h1>
          <p className="muted">
            Received <Time value={email.created_at} />
          </p>
        </div>
        {email.raw ? (
          <a className="button" href={email.raw.download_url}>
            Download the message (.eml)
          </a>
        ) : null}
      </div>
      <dl className="facts card">
        <dt>From</dt>
        <dd>{email.from}</dd>
        <dt>To</dt>
        <dd>{email.to.join(', ')}</dd>
        {email.cc?.length ? (
          <>
            <dt>Cc</dt>
            <dd>{email.cc.join(', ')}</dd>
          </>
        ) : null}
        <dt>Received for</dt>
        <dd>{email.received_for.join(', ')}</dd>
        <dt>Email id</dt>
        <dd>
          <CodeValue value={email.id} label="Copy the email id" />
        </dd>
        {email.message_id ? (
          <>
            <dt>Message-ID</dt>
            <dd>
              <code>{email.message_id}</code>
            </dd>
          </>
        ) : null}
      </dl>
      <section aria-labelledby="auth-title" className="section">
        <h2 id="auth-title">Authentication</h2>
        <dl className="facts card">
          <Verdict name="SPF" value={email.authentication.spf} />
          <Verdict name="DKIM" value={email.authentication.dkim} />
          <Verdict name="DMARC" value={email.authentication.dmarc} />
        </dl>
      </section>
      <Attachments email={email} />
      <ReceivedContent email={email} />
      <Headers email={email} />
    </>
  );
}

function Attachments({ email }: { email: Received }) {
  const list = useQuery({
    queryKey: ['received-attachments', email.id],
    queryFn: () => get<ApiShape<'AttachmentList'>>(`/emails/receiving/${email.id}/attachments`),
    enabled: email.attachments.length > 0,
  });
  return (
    <section aria-labelledby="attachments-title" className="section">
      <h2 id="attachments-title">Attachments</h2>
      {email.attachments.length === 0 ? <p className="muted">None.</p> : null}
      <ErrorMessage error={list.error} />
      {list.data ? (
        <ul className="plain-list">
          {list.data.data.map((a: Attachment) => (
            <li key={a.id}>
              <a href={a.download_url}>{a.filename ?? 'unnamed'}</a>{' '}
              <span className="muted small-text">
                {a.content_type}, {formatSize(a.size)}
                {a.content_disposition === 'inline' ? ', shown in the message' : ''}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

type Tab = 'preview' | 'html' | 'text';

const CONTENT_TABS: { id: Tab; label: string }[] = [
  { id: 'preview', label: 'Preview' },
  { id: 'html', label: 'HTML' },
  { id: 'text', label: 'Text' },
];

function ReceivedContent({ email }: { email: Received }) {
  return (
    <section aria-labelledby="received-content-title" className="section">
      <h2 id="received-content-title">Content</h2>
      <Tabs
        id="received"
        label="Content"
        tabs={CONTENT_TABS}
        initial={email.html ? 'preview' : 'text'}
        panel={(tab) => <ReceivedPanel tab={tab} email={email} />}
      />
    </section>
  );
}

function ReceivedPanel({ tab, email }: { tab: Tab; email: Received }) {
  if (tab === 'preview') {
    if (!email.html) return <p className="muted">This message has no HTML part: see its text.</p>;
    if (!email.raw) return <p className="muted">The message is not kept any more: see its HTML source.</p>;
    // The raw message's link shows the message's HTML with `view=html` (inline images in, nothing run).
    return <EmailFrame src={`${email.raw.download_url}?view=html`} title="Preview of the received email" />;
  }
  return tab === 'html' ? <PartSource part="HTML" value={email.html} /> : <PartSource part="text" value={email.text} />;
}

function Headers({ email }: { email: Received }) {
  const fields = Object.entries(email.headers).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((v) => ({
      name,
      value: typeof v === 'string' ? v : JSON.stringify(v),
    })),
  );
  return (
    <section aria-labelledby="headers-title" className="section">
      <h2 id="headers-title">Headers</h2>
      <HeaderFields fields={fields} label="Header fields" />
    </section>
  );
}

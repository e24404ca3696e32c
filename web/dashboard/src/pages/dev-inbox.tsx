// The development inbox, as a mail client shows a mailbox: the messages the MTA kept in the install instead
// of sending them (every one under DEV_INBOX; the onboarding sender's to the team's members always), newest
// first with a search kept in the URL, and beside the list the open message: who it was for, a sandboxed
// preview (remote images off until asked), its HTML, text, header fields and raw source, its attachments, the
// .eml to download, and what its events said.
import { useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { ApiError, del, download, get, getText } from '../api/client.ts';
import { PartSource, SourceBlock } from '../ui/copy.tsx';
import { ConfirmButton } from '../ui/dialog.tsx';
import { EmptyState, ErrorMessage, Loading } from '../ui/feedback.tsx';
import { text } from '../ui/form.tsx';
import { FilterForm, Pager, useFilters, useListPage } from '../ui/list.tsx';
import { HeaderFields } from '../ui/header-fields.tsx';
import { formatSize } from '../ui/size.ts';
import { Tabs } from '../ui/tabs.tsx';
import { Time } from '../ui/time.tsx';
import { DEV_INBOX, useDevInbox } from './dev-inbox-status.ts';
import { Preview, Timeline } from './emails/detail.tsx';

type Item = ApiShape<'DevInboxMessageList'>['data'][number];
type Message = ApiShape<'DevInboxMessage'>;

export default function DevInbox() {
  const { id } = useParams();
  const status = useDevInbox();
  const [filters] = useFilters();
  const page = useListPage<Item>(DEV_INBOX, '/dev-inbox/messages', filters);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const empty = async () => {
    await del('/dev-inbox/messages');
    await queryClient.invalidateQueries({ queryKey: [DEV_INBOX] });
    void navigate('/dev-inbox');
  };
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Dev inbox</h1>
          <p className="muted">
            {status.data?.enabled
              ? 'DEV_INBOX is on: every message is kept here instead of going to its recipients’ mail servers, made exactly as it would have gone out (tracked, signed), with the same events and webhooks.'
              : 'The messages the onboarding sender (onboarding@postline.test, onboarding@resend.dev) sent to this team’s members: they never leave the install. With DEV_INBOX on, every message would be kept here instead of being sent.'}
          </p>
        </div>
        {page.data?.data.length ? (
          <ConfirmButton
            label="Empty the inbox"
            title="Empty the dev inbox?"
            confirmLabel="Delete every message"
            onConfirm={empty}
          >
            <p>
              Every message kept for this team will be deleted. The emails themselves, their events and webhooks stay.
            </p>
          </ConfirmButton>
        ) : null}
      </div>
      <FilterForm label="Search the inbox" read={(data) => ({ q: text(data, 'q') })}>
        <div className="field">
          <label htmlFor="dev-inbox-q">Subject, sender or recipient</label>
          <input id="dev-inbox-q" name="q" type="search" defaultValue={filters.q ?? ''} />
        </div>
      </FilterForm>
      <div className="mail-client">
        <section aria-labelledby="dev-inbox-list-title" className="mail-list">
          <h2 id="dev-inbox-list-title" className="visually-hidden" tabIndex={-1}>
            Messages
          </h2>
          <MessageList page={page} selected={id} />
          <Pager page={page.data} after={page.after} before={page.before} />
        </section>
        <section aria-label="Open message" className="mail-message">
          {id ? (
            <OpenMessage id={id} />
          ) : (
            <h2 id="dev-inbox-message-title" className="muted">
              {page.data?.data.length ? 'Choose a message to read it.' : 'No message open.'}
            </h2>
          )}
        </section>
      </div>
    </>
  );
}

/** After a deletion the open message is gone: focus goes to the list, where the reader carries on. */
function focusList() {
  document.getElementById('dev-inbox-list-title')?.focus();
}

function MessageList({ page, selected }: { page: ReturnType<typeof useListPage<Item>>; selected: string | undefined }) {
  const [params] = useSearchParams();
  const [filters] = useFilters();
  if (page.error) return <ErrorMessage error={page.error} />;
  if (!page.data) return <Loading />;
  if (page.data.data.length === 0) {
    return (
      <EmptyState title={filters.q ? 'No message matches' : 'The inbox is empty'}>
        <p>
          {filters.q
            ? 'Try another part of the subject, the sender or a recipient.'
            : 'Send from onboarding@postline.test to a member of this team (or anything, with DEV_INBOX on) and it lands here.'}
        </p>
      </EmptyState>
    );
  }
  const search = params.toString();
  return (
    <ul className="mail-items" aria-label="Kept messages" aria-busy={page.isPlaceholderData}>
      {page.data.data.map((item) => (
        <li key={item.id}>
          <Link
            to={`/dev-inbox/${item.id}${search ? `?${search}` : ''}`}
            aria-current={item.id === selected ? 'true' : undefined}
            className="mail-item"
          >
            <span className="mail-from">{item.from}</span>
            <span className="mail-subject">{item.subject || '(no subject)'}</span>
            <span className="muted small-text break-anywhere">To {item.to.join(', ')}</span>
            <span className="muted small-text">
              <Time value={item.created_at} /> · {formatSize(item.size)}
            </span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

function OpenMessage({ id }: { id: string }) {
  const message = useQuery({
    queryKey: [DEV_INBOX, 'message', id],
    queryFn: () => get<Message>(`/dev-inbox/messages/${encodeURIComponent(id)}`),
  });
  if (message.error) {
    const gone = message.error instanceof ApiError && message.error.statusCode === 404;
    return (
      <>
        <h2 id="dev-inbox-message-title">{gone ? 'Message not found' : 'Message'}</h2>
        <ErrorMessage error={message.error} />
      </>
    );
  }
  if (!message.data) return <Loading />;
  return <MessageView message={message.data} />;
}

function MessageView({ message }: { message: Message }) {
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const remove = async () => {
    await del(`/dev-inbox/messages/${message.id}`);
    // Leave the message before the lists are read again, so that it is not asked for (and found gone).
    queryClient.removeQueries({ queryKey: [DEV_INBOX, 'message', message.id] });
    await navigate(`/dev-inbox${params.size ? `?${params.toString()}` : ''}`);
    await queryClient.invalidateQueries({ queryKey: [DEV_INBOX] });
    focusList();
  };
  return (
    <article aria-labelledby="dev-inbox-message-title">
      <h2 id="dev-inbox-message-title" className="break-anywhere">
        {message.subject || '(no subject)'}
      </h2>
      <dl className="facts card">
        <dt>From</dt>
        <dd>{message.from}</dd>
        <dt>To</dt>
        <dd>{message.to.join(', ')}</dd>
        <dt>Kept</dt>
        <dd>
          <Time value={message.created_at} />
        </dd>
        <dt>Size</dt>
        <dd>{formatSize(message.size)}</dd>
        <dt>Return path</dt>
        <dd>
          <code>{message.envelope_from}</code>
        </dd>
        <dt>Email</dt>
        <dd>
          <Link to={`/emails/${message.email_id}`}>Open the email, its delivery and insights</Link>
        </dd>
      </dl>
      <div className="actions">
        <button
          type="button"
          className="button"
          onClick={() => {
            setDownloadError(null);
            download(`/dev-inbox/messages/${message.id}/raw`, {}, `${message.id}.eml`).catch(setDownloadError);
          }}
        >
          Download the message (.eml)
        </button>
        <ConfirmButton
          label="Delete"
          accessibleName="Delete this message"
          title="Delete this message?"
          confirmLabel="Delete the message"
          onConfirm={remove}
        >
          <p>The kept copy goes; the email, its events and webhooks stay.</p>
        </ConfirmButton>
      </div>
      <ErrorMessage error={downloadError} />
      <MessageContent message={message} />
      {message.attachments.length > 0 ? (
        <section aria-labelledby="dev-inbox-attachments-title">
          <h3 id="dev-inbox-attachments-title">Attachments</h3>
          <ul className="plain-list">
            {message.attachments.map((a, i) => (
              <li key={`${a.filename ?? ''}-${i}`}>
                {a.filename ?? 'unnamed'}{' '}
                <span className="muted small-text">
                  {a.content_type}, {formatSize(a.size)}
                </span>
              </li>
            ))}
          </ul>
          <p className="muted small-text">They are in the .eml download.</p>
        </section>
      ) : null}
      <EmailEvents emailId={message.email_id} />
    </article>
  );
}

type Tab = 'preview' | 'html' | 'text' | 'headers' | 'raw';

const TABS: { id: Tab; label: string }[] = [
  { id: 'preview', label: 'Preview' },
  { id: 'html', label: 'HTML' },
  { id: 'text', label: 'Text' },
  { id: 'headers', label: 'Headers' },
  { id: 'raw', label: 'Raw' },
];

function MessageContent({ message }: { message: Message }) {
  return (
    <section aria-labelledby="dev-inbox-content-title">
      <h3 id="dev-inbox-content-title" className="visually-hidden">
        Content
      </h3>
      <Tabs
        key={message.id}
        id="dev-inbox"
        label="Message"
        tabs={TABS}
        initial={message.html ? 'preview' : 'text'}
        panel={(tab) => <Panel tab={tab} message={message} />}
      />
    </section>
  );
}

function Panel({ tab, message }: { tab: Tab; message: Message }) {
  if (tab === 'preview') {
    if (!message.html) return <p className="muted">This message has no HTML part: see its text.</p>;
    return <MessagePreview emailId={message.email_id} />;
  }
  if (tab === 'html') return <PartSource part="HTML" value={message.html} />;
  if (tab === 'text') return <PartSource part="text" value={message.text} />;
  if (tab === 'headers') return <HeaderFields fields={message.headers} label="Header fields" />;
  return <RawSource id={message.id} />;
}

/** The email's preview as its recipients see it (its share page, sandboxed): the email the message was made from. */
function MessagePreview({ emailId }: { emailId: string }) {
  const email = useEmail(emailId);
  if (email.error) return <ErrorMessage error={email.error} />;
  if (!email.data) return <Loading />;
  return <Preview email={email.data} />;
}

function useEmail(id: string) {
  return useQuery({ queryKey: ['email', id], queryFn: () => get<ApiShape<'Email'>>(`/emails/${id}`) });
}

function RawSource({ id }: { id: string }) {
  const raw = useQuery({
    queryKey: [DEV_INBOX, 'raw', id],
    queryFn: () => getText(`/dev-inbox/messages/${id}/raw`),
  });
  if (raw.error) return <ErrorMessage error={raw.error} />;
  if (raw.data === undefined) return <Loading />;
  return <SourceBlock value={raw.data} label="Copy the message" />;
}

/** What the email's events said, oldest first, with the webhooks each caused. */
function EmailEvents({ emailId }: { emailId: string }) {
  const email = useEmail(emailId);
  if (email.error) return <ErrorMessage error={email.error} />;
  if (!email.data) return null;
  return <Timeline email={email.data} polling={0} />;
}

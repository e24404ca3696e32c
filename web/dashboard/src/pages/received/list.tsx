// Mail received at the team's receiving domains (GET /emails/receiving), newest first.
import { Link } from 'react-router';
import type { ApiShape } from '@postline/contracts';
import { EmptyState } from '../../ui/feedback.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { RetentionNote } from '../../ui/retention.tsx';

type ReceivedItem = ApiShape<'ReceivedEmailList'>['data'][number];

export function ReceivedList() {
  const page = useListPage<ReceivedItem>('received', '/emails/receiving');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Received</h1>
          <p className="muted">
            Mail that came in at this team’s receiving domains, each also sent as email.received.
            <RetentionNote what="Received emails" />
          </p>
        </div>
      </div>
      <ListTable
        query={page}
        caption="Received emails"
        columns={['Subject', 'From', 'To', 'Attachments', 'Received']}
        empty={
          <EmptyState title="Nothing received yet">
            <p>
              Turn receiving on for a domain (its page, Sending and receiving) and publish its MX record: mail to any
              address at it lands here.
            </p>
          </EmptyState>
        }
        row={(email) => (
          <tr key={email.id}>
            <th scope="row" className="break-anywhere">
              <Link to={`/received/${email.id}`}>{email.subject || '(no subject)'}</Link>
            </th>
            <td className="break-anywhere">{email.from}</td>
            <td className="break-anywhere">{email.to.join(', ')}</td>
            <td>{email.attachments.length || <span className="muted">none</span>}</td>
            <td>
              <Time value={email.created_at} stacked />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

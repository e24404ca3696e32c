// The team's signup forms: hosted, key-less pages (and a snippet for the team's own site) that add a person
// to chosen segments and topics, with double opt-in. Listed here with what each took; one form's page is
// forms-detail.tsx, its settings forms-editor.tsx.
import { Link } from 'react-router';
import type { ApiShape } from '@postline/contracts';
import { Badge, EmptyState } from '../../ui/feedback.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';

export const FORMS = 'forms';
export type SignupForm = ApiShape<'Form'>;

export function Forms() {
  const page = useListPage<ApiShape<'FormList'>['data'][number]>(FORMS, '/forms');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Signup forms</h1>
          <p className="muted">
            A hosted page, or a snippet on your own site, where people sign up. With double opt-in they confirm their
            address first, and only then become contacts.
          </p>
        </div>
        <Link to="/audience/forms/new" className="button primary">
          Create a form
        </Link>
      </div>
      <ListTable
        query={page}
        caption="Signup forms"
        columns={['Name', 'State', 'Submissions', 'Pending', 'Confirmed', 'Created']}
        empty={
          <EmptyState title="No signup forms yet">
            <p>Create a form to let people subscribe to your segments and topics.</p>
          </EmptyState>
        }
        row={(form) => (
          <tr key={form.id}>
            <th scope="row" className="break-anywhere">
              <Link to={`/audience/forms/${form.id}`}>{form.name}</Link>
            </th>
            <td>
              {form.enabled ? <Badge tone="good">enabled</Badge> : <Badge>disabled</Badge>}{' '}
              {form.double_opt_in ? null : <Badge tone="warn">no double opt-in</Badge>}
            </td>
            <td>{form.counts.submissions}</td>
            <td>{form.counts.pending}</td>
            <td>{form.counts.confirmed}</td>
            <td>
              <Time value={form.created_at} stacked />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

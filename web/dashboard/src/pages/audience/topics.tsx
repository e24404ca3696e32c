// The team's topics (what a contact may subscribe to, broadcast by broadcast): each with its default
// subscription and whether contacts see it on their preference page; created, edited and deleted here.
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { del, patch, post } from '../../api/client.ts';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { Badge, Count, EmptyState } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { TOPICS, useListCounts, type Topic } from './queries.ts';

export function Topics() {
  const page = useListPage<Topic>(TOPICS, '/topics');
  const counted = useListCounts<Topic>(TOPICS, '/topics');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Topics</h1>
          <p className="muted">
            A broadcast sent under a topic reaches only the contacts subscribed to it: by their own choice, or by the
            topic&apos;s default.
          </p>
        </div>
        <TopicDialog />
      </div>
      <ListTable
        query={page}
        caption="Topics"
        columns={['Name', 'Default', 'Subscribed', 'Opted out', 'Shown to contacts', 'Created']}
        actions
        empty={
          <EmptyState title="No topics yet">
            <p>Create a topic (a newsletter, product news) to let contacts choose what they receive.</p>
          </EmptyState>
        }
        row={(t) => (
          <tr key={t.id}>
            <th scope="row" className="break-anywhere">
              {t.name}
              {t.description ? <span className="muted small-text block">{t.description}</span> : null}
            </th>
            <td>
              {t.default_subscription === 'opt_in' ? (
                <Badge tone="good">subscribed</Badge>
              ) : (
                <Badge>not subscribed</Badge>
              )}
            </td>
            <td className="numeric">
              <Count
                value={counted(t.id)?.counts?.opt_in}
                link={(n) => ({
                  to: `/audience?topic_id=${t.id}&topic_subscription=opt_in`,
                  label: `${t.name}: its ${n} subscribed contacts`,
                })}
              />
            </td>
            <td className="numeric">
              <Count
                value={counted(t.id)?.counts?.opt_out}
                link={(n) => ({
                  to: `/audience?topic_id=${t.id}&topic_subscription=opt_out`,
                  label: `${t.name}: its ${n} opted-out contacts`,
                })}
              />
            </td>
            <td>{t.visibility === 'public' ? 'Yes' : 'No (private)'}</td>
            <td>
              <Time value={t.created_at} stacked />
            </td>
            <td className="row-actions">
              <TopicDialog topic={t} />
              <DeleteTopic topic={t} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** Create a topic, or edit `topic` (its default subscription is fixed once created, as in Resend). */
function TopicDialog({ topic }: { topic?: Topic }) {
  const [open, setOpen] = useState(false);
  const client = useQueryClient();
  const save = async (data: FormData) => {
    const fields = {
      name: text(data, 'name'),
      description: text(data, 'description') || null,
      visibility: text(data, 'visibility') as Topic['visibility'],
    };
    if (topic) await patch(`/topics/${topic.id}`, fields satisfies ApiRequest<'UpdateTopicBody'>);
    else
      await post('/topics', {
        ...fields,
        default_subscription: text(data, 'default_subscription') as Topic['default_subscription'],
      } satisfies ApiRequest<'CreateTopicBody'>);
    await client.invalidateQueries({ queryKey: [TOPICS] });
    setOpen(false);
  };
  const title = topic ? `Edit ${topic.name}` : 'Create a topic';
  return (
    <>
      <button
        type="button"
        className={topic ? 'button small' : 'button primary'}
        aria-label={topic ? title : undefined}
        onClick={() => setOpen(true)}
      >
        {topic ? 'Edit' : 'Create a topic'}
      </button>
      <Dialog open={open} title={title} onClose={() => setOpen(false)}>
        <ActionForm action={save} submitLabel={topic ? 'Save' : 'Create'} label={title} onCancel={() => setOpen(false)}>
          <Field label="Name">
            {(p) => <input {...p} name="name" required maxLength={50} defaultValue={topic?.name ?? ''} />}
          </Field>
          <Field label="Description">
            {(p) => <input {...p} name="description" maxLength={200} defaultValue={topic?.description ?? ''} />}
          </Field>
          {topic ? null : (
            <Field label="Default subscription" hint="What a contact who never chose gets. It cannot change later.">
              {(p) => (
                <select {...p} name="default_subscription" defaultValue="opt_in">
                  <option value="opt_in">Subscribed (opt in)</option>
                  <option value="opt_out">Not subscribed (opt out)</option>
                </select>
              )}
            </Field>
          )}
          <Field label="Shown on the preference page">
            {(p) => (
              <select {...p} name="visibility" defaultValue={topic?.visibility ?? 'public'}>
                <option value="public">Yes (public)</option>
                <option value="private">No (private)</option>
              </select>
            )}
          </Field>
        </ActionForm>
      </Dialog>
    </>
  );
}

function DeleteTopic({ topic }: { topic: Topic }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Delete"
      accessibleName={`Delete ${topic.name}`}
      title={`Delete ${topic.name}?`}
      confirmLabel="Delete the topic"
      onConfirm={async () => {
        await del(`/topics/${topic.id}`);
        await client.invalidateQueries({ queryKey: [TOPICS] });
      }}
    >
      <p>Contacts&apos; choices for it go with it.</p>
    </ConfirmButton>
  );
}

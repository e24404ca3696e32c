// The team's segments (the lists broadcasts are sent to): each with a link to its contacts; created,
// renamed and deleted here (deleting one keeps its contacts).
import { useState } from 'react';
import { Link } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post } from '../../api/client.ts';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { Count, EmptyState } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { SEGMENTS, useListCounts, type CountedSegment, type Segment } from './queries.ts';

export function Segments() {
  const page = useListPage<Segment>(SEGMENTS, '/segments');
  const counted = useListCounts<CountedSegment>(SEGMENTS, '/segments');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Segments</h1>
          <p className="muted">The groups of contacts a broadcast is sent to.</p>
        </div>
        <SegmentDialog />
      </div>
      <ListTable
        query={page}
        caption="Segments"
        columns={['Name', 'Contacts', 'Created']}
        actions
        empty={
          <EmptyState title="No segments yet">
            <p>Create a segment, then add contacts to it from their pages or an import.</p>
          </EmptyState>
        }
        row={(s) => (
          <tr key={s.id}>
            <th scope="row" className="break-anywhere">
              <Link to={`/audience?segment_id=${s.id}`} aria-label={`${s.name}: its contacts`}>
                {s.name}
              </Link>
            </th>
            <td className="numeric">
              <Count value={counted(s.id)?.contacts_count} />
            </td>
            <td>
              <Time value={s.created_at} stacked />
            </td>
            <td className="row-actions">
              <SegmentDialog segment={s} />
              <DeleteSegment segment={s} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** Create a segment, or rename `segment`. */
function SegmentDialog({ segment }: { segment?: Segment }) {
  const [open, setOpen] = useState(false);
  const client = useQueryClient();
  const save = async (data: FormData) => {
    const name = text(data, 'name');
    if (segment) await patch(`/segments/${segment.id}`, { name });
    else await post('/segments', { name });
    await client.invalidateQueries({ queryKey: [SEGMENTS] });
    setOpen(false);
  };
  const title = segment ? `Rename ${segment.name}` : 'Create a segment';
  return (
    <>
      <button
        type="button"
        className={segment ? 'button small' : 'button primary'}
        aria-label={segment ? title : undefined}
        onClick={() => setOpen(true)}
      >
        {segment ? 'Rename' : 'Create a segment'}
      </button>
      <Dialog open={open} title={title} onClose={() => setOpen(false)}>
        <ActionForm
          action={save}
          submitLabel={segment ? 'Rename' : 'Create'}
          label={title}
          onCancel={() => setOpen(false)}
        >
          <Field label="Name">
            {(p) => <input {...p} name="name" required maxLength={255} defaultValue={segment?.name ?? ''} />}
          </Field>
        </ActionForm>
      </Dialog>
    </>
  );
}

function DeleteSegment({ segment }: { segment: Segment }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Delete"
      accessibleName={`Delete ${segment.name}`}
      title={`Delete ${segment.name}?`}
      confirmLabel="Delete the segment"
      onConfirm={async () => {
        await del(`/segments/${segment.id}`);
        await client.invalidateQueries({ queryKey: [SEGMENTS] });
      }}
    >
      <p>Its contacts stay; broadcasts drafted for it cannot be sent until given another segment.</p>
    </ConfirmButton>
  );
}

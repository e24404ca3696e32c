// The team's contact properties (what a template's variables and a broadcast's personalisation read): each
// with its type and fallback; created, changed and deleted here.
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post } from '../../api/client.ts';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { Count, EmptyState } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { PROPERTIES, useListCounts, type Property } from './queries.ts';

export function Properties() {
  const page = useListPage<Property>(PROPERTIES, '/contact-properties');
  const counted = useListCounts<Property>(PROPERTIES, '/contact-properties');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Contact properties</h1>
          <p className="muted">
            What you know about each contact, filled into broadcasts as <code>{'{{{key}}}'}</code>; a contact without a
            value gets the fallback.
          </p>
        </div>
        <PropertyDialog />
      </div>
      <ListTable
        query={page}
        caption="Contact properties"
        columns={['Key', 'Type', 'Fallback', 'Contacts with a value', 'Created']}
        actions
        empty={
          <EmptyState title="No properties yet">
            <p>Create one (a plan, a company, a city) to keep it on contacts and use it in broadcasts.</p>
          </EmptyState>
        }
        row={(property) => (
          <tr key={property.id}>
            <th scope="row" className="break-anywhere">
              <code>{property.key}</code>
            </th>
            <td>{property.type}</td>
            <td className="break-anywhere">
              {property.fallback_value === null ? <span className="muted">none</span> : String(property.fallback_value)}
            </td>
            <td className="numeric">
              <Count value={counted(property.id)?.contacts_count} />
            </td>
            <td>
              <Time value={property.created_at} stacked />
            </td>
            <td className="row-actions">
              <PropertyDialog property={property} />
              <DeleteProperty property={property} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** Create a property, or change `property`'s fallback (its key and type stay). */
function PropertyDialog({ property }: { property?: Property }) {
  const [open, setOpen] = useState(false);
  const [type, setType] = useState<Property['type']>(property?.type ?? 'string');
  const client = useQueryClient();
  const save = async (data: FormData) => {
    const raw = text(data, 'fallback_value');
    const fallback = raw === '' ? null : type === 'number' ? Number(raw) : raw;
    if (property) await patch(`/contact-properties/${property.id}`, { fallback_value: fallback });
    else await post('/contact-properties', { key: text(data, 'key'), type, fallback_value: fallback });
    await client.invalidateQueries({ queryKey: [PROPERTIES] });
    setOpen(false);
  };
  const title = property ? `Change ${property.key}` : 'Create a property';
  return (
    <>
      <button
        type="button"
        className={property ? 'button small' : 'button primary'}
        aria-label={property ? title : undefined}
        onClick={() => setOpen(true)}
      >
        {property ? 'Change' : 'Create a property'}
      </button>
      <Dialog open={open} title={title} onClose={() => setOpen(false)}>
        <ActionForm
          action={save}
          submitLabel={property ? 'Save' : 'Create'}
          label={title}
          onCancel={() => setOpen(false)}
        >
          {property ? null : (
            <>
              <Field label="Key" hint="Letters, digits and underscores, as templates name it.">
                {(p) => <input {...p} name="key" required maxLength={50} pattern="[A-Za-z0-9_]+" />}
              </Field>
              <Field label="Type">
                {(p) => (
                  <select {...p} name="type" value={type} onChange={(e) => setType(e.target.value as Property['type'])}>
                    <option value="string">Text</option>
                    <option value="number">Number</option>
                  </select>
                )}
              </Field>
            </>
          )}
          <Field label="Fallback" hint="Used for a contact without a value; empty for none.">
            {(p) => (
              <input
                {...p}
                name="fallback_value"
                type={type === 'number' ? 'number' : 'text'}
                step={type === 'number' ? 'any' : undefined}
                defaultValue={property?.fallback_value === null ? '' : String(property?.fallback_value ?? '')}
              />
            )}
          </Field>
        </ActionForm>
      </Dialog>
    </>
  );
}

function DeleteProperty({ property }: { property: Property }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Delete"
      accessibleName={`Delete ${property.key}`}
      title={`Delete ${property.key}?`}
      confirmLabel="Delete the property"
      onConfirm={async () => {
        await del(`/contact-properties/${property.id}`);
        await client.invalidateQueries({ queryKey: [PROPERTIES] });
      }}
    >
      <p>Every contact&apos;s value for it goes with it.</p>
    </ConfirmButton>
  );
}

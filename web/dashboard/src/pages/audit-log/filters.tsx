// The audit log's filters: a family (or one action), an actor, a target id. Applied on submit, into the URL.
import { FilterForm, useFilters } from '../../ui/list.tsx';
import { Field, LateSelect, text } from '../../ui/form.tsx';

export type Actor = { id: string; label: string };

/** The families the audit log records, with their named actions. */
const FAMILIES: { value: string; label: string }[] = [
  { value: 'api-keys', label: 'API keys' },
  { value: 'domains', label: 'Domains' },
  { value: 'webhooks', label: 'Webhooks' },
  { value: 'members', label: 'Members' },
  { value: 'invites', label: 'Invites' },
  { value: 'contacts', label: 'Contacts' },
  { value: 'contact-properties', label: 'Contact properties' },
  { value: 'segments', label: 'Segments' },
  { value: 'audiences', label: 'Audiences' },
  { value: 'topics', label: 'Topics' },
  { value: 'templates', label: 'Templates' },
  { value: 'broadcasts', label: 'Broadcasts' },
  { value: 'suppressions', label: 'Suppressions' },
];

export function AuditFilters({ actors }: { actors: Actor[] }) {
  const [filters] = useFilters();
  const read = (data: FormData) => ({
    action: text(data, 'action'),
    actor_id: text(data, 'actor_id'),
    target_id: text(data, 'target_id'),
  });
  const known = FAMILIES.some((f) => f.value === filters.action);
  return (
    <FilterForm label="Filter the audit log" read={read}>
      <Field label="Family or action">
        {(p) => (
          <select {...p} name="action" defaultValue={filters.action ?? ''}>
            <option value="">Every change</option>
            {FAMILIES.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
            {filters.action && !known ? <option value={filters.action}>{filters.action}</option> : null}
          </select>
        )}
      </Field>
      <Field label="Actor">
        {(p) => (
          <LateSelect
            {...p}
            name="actor_id"
            initial={filters.actor_id ?? ''}
            anyLabel="Anyone"
            options={actors.map((a) => ({ value: a.id, label: a.label }))}
          />
        )}
      </Field>
      <Field label="Target id">
        {(p) => <input {...p} name="target_id" defaultValue={filters.target_id ?? ''} autoComplete="off" />}
      </Field>
    </FilterForm>
  );
}

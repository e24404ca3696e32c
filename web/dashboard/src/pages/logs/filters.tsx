// The request log's filters, as GET /logs takes them; applied on submit, into the URL. The time range is
// picked in the reader's time zone and kept in the URL as ISO 8601.
import type { ApiShape } from '@postline/contracts';
import { useApiKeyNames } from '../../api/people.ts';
import { FilterForm, useFilters } from '../../ui/list.tsx';
import { Field, LateSelect, text } from '../../ui/form.tsx';
import { fromLocalInput, toLocalInput } from '../../ui/time.tsx';

type LogItem = ApiShape<'LogList'>['data'][number];

export const FILTER_NAMES = [
  'status',
  'method',
  'endpoint',
  'api_key_id',
  'user_agent',
  'created_after',
  'created_before',
] as const;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function LogFilters({ shown, isAdmin }: { shown: LogItem[]; isAdmin: boolean }) {
  const [filters] = useFilters();
  const keys = useApiKeyNames({ enabled: isAdmin });
  // Admins pick among the team's keys; members among the keys of the requests shown.
  const options = new Map<string, string>();
  for (const k of keys.data?.data ?? []) options.set(k.id, k.name);
  for (const log of shown)
    if (log.api_key && !options.has(log.api_key.id)) options.set(log.api_key.id, log.api_key.name ?? log.api_key.id);

  const read = (data: FormData) => ({
    status: text(data, 'status').toLowerCase(),
    method: text(data, 'method'),
    endpoint: text(data, 'endpoint'),
    api_key_id: text(data, 'api_key_id'),
    user_agent: text(data, 'user_agent'),
    created_after: fromLocalInput(text(data, 'created_after')),
    created_before: fromLocalInput(text(data, 'created_before')),
  });
  return (
    <FilterForm label="Filter the logs" read={read}>
      <Field label="Status" hint="A code (404) or a class (4xx).">
        {(p) => <input {...p} name="status" defaultValue={filters.status ?? ''} autoComplete="off" size={6} />}
      </Field>
      <Field label="Method">
        {(p) => (
          <select {...p} name="method" defaultValue={filters.method ?? ''}>
            <option value="">Any</option>
            {METHODS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Endpoint" hint="A path or its start: /emails">
        {(p) => <input {...p} name="endpoint" defaultValue={filters.endpoint ?? ''} autoComplete="off" />}
      </Field>
      <Field label="API key">
        {(p) => (
          <LateSelect
            {...p}
            name="api_key_id"
            initial={filters.api_key_id ?? ''}
            anyLabel="Any"
            options={[...options].map(([value, label]) => ({ value, label }))}
          />
        )}
      </Field>
      <Field label="User agent" hint="Any part of it: resend-node">
        {(p) => <input {...p} name="user_agent" defaultValue={filters.user_agent ?? ''} autoComplete="off" />}
      </Field>
      <Field label="From">
        {(p) => (
          <input {...p} name="created_after" type="datetime-local" defaultValue={toLocalInput(filters.created_after)} />
        )}
      </Field>
      <Field label="Until">
        {(p) => (
          <input
            {...p}
            name="created_before"
            type="datetime-local"
            defaultValue={toLocalInput(filters.created_before)}
          />
        )}
      </Field>
    </FilterForm>
  );
}

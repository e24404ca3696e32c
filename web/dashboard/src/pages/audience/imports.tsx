// Contact imports: the team's imports with their counts; a new import (a CSV file previewed in the browser,
// each column mapped to a contact field or property, what to do with existing contacts, the segments and
// topics every imported contact gets); and one import's progress, read again each second until it ends, with
// its final counts and each failed row's reason.
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { importFieldOfHeader } from '@postline/contracts/import-headers';
import { ApiError, get, post } from '../../api/client.ts';
import { EmptyState, ErrorMessage, Loading, StatusBadge } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { previewCsv } from './csv-preview.ts';
import { CONTACTS, useProperties, useSegments, useTopics } from './queries.ts';

type ContactImport = ApiShape<'ContactImport'>;
type ImportItem = ApiShape<'ContactImportList'>['data'][number];

const IMPORTS = 'contact-imports';
/** How often a running import is read again. */
const POLL_MS = 1000;

export function Imports() {
  const page = useListPage<ImportItem>(IMPORTS, '/contacts/imports');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Imports</h1>
          <p className="muted">
            Contacts from CSV files: each import with what it created, updated, skipped or failed.
          </p>
        </div>
        <Link className="button primary" to="/audience/imports/new">
          Import a CSV
        </Link>
      </div>
      <ListTable
        query={page}
        caption="Imports"
        columns={['Started', 'Status', 'Rows', 'Created', 'Updated', 'Skipped', 'Failed']}
        empty={
          <EmptyState title="No imports yet">
            <p>Import a CSV file with a header row; each row becomes a contact.</p>
          </EmptyState>
        }
        row={(i) => (
          <tr key={i.id}>
            <th scope="row">
              <Link to={`/audience/imports/${i.id}`}>
                <Time value={i.created_at} />
              </Link>
            </th>
            <td>
              <StatusBadge status={i.status} />
            </td>
            <td>{i.counts.total}</td>
            <td>{i.counts.created}</td>
            <td>{i.counts.updated}</td>
            <td>{i.counts.skipped}</td>
            <td>{i.counts.failed}</td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

const FIELDS = [
  { value: 'email', label: 'Email' },
  { value: 'first_name', label: 'First name' },
  { value: 'last_name', label: 'Last name' },
  { value: 'unsubscribed', label: 'Unsubscribed' },
];

/**
 * The target a column maps to by default: the contact field its name fills on the server
 * (importFieldOfHeader), else a property of that key (exactly, then in any case).
 */
function defaultTarget(column: string, propertyKeys: string[]): string {
  const field = importFieldOfHeader(column);
  if (field) return field;
  const key =
    propertyKeys.find((k) => k === column) ?? propertyKeys.find((k) => k.toLowerCase() === column.toLowerCase());
  return key ? `property:${key}` : '';
}

export function NewImport() {
  const navigate = useNavigate();
  const client = useQueryClient();
  const properties = useProperties();
  const segments = useSegments();
  const topics = useTopics();
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<Awaited<ReturnType<typeof previewCsv>> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const propertyKeys = (properties.data?.data ?? []).map((p) => p.key);

  const latest = useRef<File | null>(null);
  const choose = async (chosen: File | null) => {
    latest.current = chosen;
    setFile(chosen);
    setPreview(null);
    setError(null);
    if (!chosen) return;
    try {
      const read = await previewCsv(chosen);
      if (read.header.length === 0) throw new Error('The file has no header row.');
      // A file chosen meanwhile replaces this one.
      if (latest.current === chosen) setPreview(read);
    } catch (err) {
      if (latest.current === chosen) setError(err);
    }
  };

  const start = async (data: FormData) => {
    if (!file || !preview) throw new Error('Choose a CSV file first.');
    // The file goes with neutral column names (column_1, ...) and every mapping named, so that a column set to
    // Skip is skipped even when its name would map it, and only the mapping chosen here applies.
    const names = preview.header.map((_, i) => `column_${i + 1}`);
    const fields: Record<string, string> = {};
    const propertyColumns: Record<string, string> = {};
    preview.header.forEach((column, i) => {
      const target = text(data, `column-${i}`);
      const [kind, into] = target.startsWith('property:') ? ['property', target.slice(9)] : ['field', target];
      if (!into) return;
      const taken = kind === 'property' ? propertyColumns : fields;
      if (taken[into] !== undefined) throw new Error(`Two columns import into ${into}: choose one of them.`);
      taken[into] = names[i]!;
    });
    if (!fields.email) throw new Error('Map one column to Email: every contact needs one.');
    const form = new FormData();
    const body = new Blob([`${names.join(',')}\r\n`, file.slice(preview.headerBytes)], { type: 'text/csv' });
    form.set('file', body, file.name);
    form.set('column_map', JSON.stringify({ ...fields, properties: propertyColumns }));
    form.set('on_conflict', text(data, 'on_conflict') || 'skip');
    form.set('segments', JSON.stringify(data.getAll('segment').filter((v): v is string => typeof v === 'string')));
    form.set(
      'topics',
      JSON.stringify(
        (topics.data?.data ?? []).flatMap((topic) => {
          const subscription = text(data, `topic-${topic.id}`);
          return subscription ? [{ id: topic.id, subscription }] : [];
        }),
      ),
    );
    const started = await post<{ id: string }>('/contacts/imports', form);
    await client.invalidateQueries({ queryKey: [IMPORTS] });
    await navigate(`/audience/imports/${started.id}`);
  };

  return (
    <>
      <p>
        <Link to="/audience/imports">← Imports</Link>
      </p>
      <h1>Import a CSV</h1>
      <div className="field">
        <label htmlFor="import-file">CSV file</label>
        <input
          id="import-file"
          type="file"
          accept=".csv,text/csv"
          aria-describedby="import-file-hint"
          onChange={(event) => void choose(event.currentTarget.files?.[0] ?? null)}
        />
        <p id="import-file-hint" className="hint">
          A header row, then one contact per row (at most 50 MB). Nothing is imported until you start it.
        </p>
      </div>
      <ErrorMessage error={error} />
      {preview ? (
        <ActionForm action={start} submitLabel="Start the import" label="Import settings">
          <section aria-labelledby="import-columns-title">
            <h2 id="import-columns-title">Columns</h2>
            <div className="table-wrap" tabIndex={0} role="region" aria-label="The file's first rows">
              <table>
                <caption className="visually-hidden">The file&apos;s first rows, and what each column fills</caption>
                <thead>
                  <tr>
                    {preview.header.map((column, i) => (
                      <th key={`${column}-${i}`} scope="col">
                        {column}
                      </th>
                    ))}
                  </tr>
                  <tr>
                    {preview.header.map((column, i) => (
                      <td key={`${column}-${i}`}>
                        <label className="visually-hidden" htmlFor={`column-${i}`}>
                          {`Column ${column} imports into`}
                        </label>
                        <select
                          id={`column-${i}`}
                          name={`column-${i}`}
                          defaultValue={defaultTarget(column, propertyKeys)}
                          key={propertyKeys.join()}
                        >
                          <option value="">Skip</option>
                          {FIELDS.map((f) => (
                            <option key={f.value} value={f.value}>
                              {f.label}
                            </option>
                          ))}
                          {propertyKeys.map((key) => (
                            <option key={key} value={`property:${key}`}>
                              {`Property: ${key}`}
                            </option>
                          ))}
                        </select>
                      </td>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {preview.rows.map((row, r) => (
                    <tr key={r}>
                      {preview.header.map((_, i) => (
                        <td key={i} className="break-anywhere">
                          {row[i] ?? ''}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <fieldset className="field">
            <legend>A contact that already exists (the same email)</legend>
            <label>
              <input type="radio" name="on_conflict" value="skip" defaultChecked /> Leave it as it is (skip the row)
            </label>
            <label>
              <input type="radio" name="on_conflict" value="upsert" /> Update it from the row
            </label>
          </fieldset>
          {segments.data?.data.length ? (
            <fieldset className="field">
              <legend>Add every imported contact to</legend>
              {segments.data.data.map((segment) => (
                <label key={segment.id}>
                  <input type="checkbox" name="segment" value={segment.id} /> {segment.name}
                </label>
              ))}
            </fieldset>
          ) : null}
          {(topics.data?.data ?? []).map((topic) => (
            <Field key={topic.id} label={`Topic: ${topic.name}`}>
              {(p) => (
                <select {...p} name={`topic-${topic.id}`} defaultValue="">
                  <option value="">Leave each contact&apos;s choice</option>
                  <option value="opt_in">Subscribe every imported contact</option>
                  <option value="opt_out">Unsubscribe every imported contact</option>
                </select>
              )}
            </Field>
          ))}
        </ActionForm>
      ) : null}
    </>
  );
}

export function ImportPage() {
  const { id = '' } = useParams();
  const client = useQueryClient();
  const contactImport = useQuery({
    queryKey: [IMPORTS, 'one', id],
    queryFn: () => get<ContactImport>(`/contacts/imports/${encodeURIComponent(id)}`),
    refetchInterval: (query) => {
      const status = query.state.data?.status;
      return status === 'completed' || status === 'failed' ? false : POLL_MS;
    },
  });
  const done = contactImport.data?.status === 'completed' || contactImport.data?.status === 'failed';
  // The contacts lists read again once the import has ended.
  useEffect(() => {
    if (done) void client.invalidateQueries({ queryKey: [CONTACTS] });
  }, [done, client]);
  if (contactImport.error) {
    const gone = contactImport.error instanceof ApiError && contactImport.error.statusCode === 404;
    return (
      <>
        <h1>{gone ? 'Import not found' : 'Import'}</h1>
        <ErrorMessage error={contactImport.error} />
        <Link to="/audience/imports">Back to imports</Link>
      </>
    );
  }
  const data = contactImport.data;
  if (!data) return <Loading />;
  const handled = data.counts.created + data.counts.updated + data.counts.skipped + data.counts.failed;
  return (
    <>
      <p>
        <Link to="/audience/imports">← Imports</Link>
      </p>
      <div className="page-header">
        <div>
          <h1>Import</h1>
          <p className="muted">
            <StatusBadge status={data.status} /> Started <Time value={data.created_at} />
            {data.completed_at ? (
              <>
                , ended <Time value={data.completed_at} />
              </>
            ) : null}
          </p>
        </div>
      </div>
      <section aria-labelledby="import-progress-title" className="section">
        <h2 id="import-progress-title">Progress</h2>
        <progress
          className="import-progress"
          max={Math.max(data.counts.total, 1)}
          value={done ? Math.max(data.counts.total, 1) : handled}
          aria-label="Rows handled"
        />
        <dl className="facts card" aria-live="polite">
          <dt>Rows</dt>
          <dd>{data.counts.total}</dd>
          <dt>Created</dt>
          <dd>{data.counts.created}</dd>
          <dt>Updated</dt>
          <dd>{data.counts.updated}</dd>
          <dt>Skipped</dt>
          <dd>{data.counts.skipped}</dd>
          <dt>Failed</dt>
          <dd>{data.counts.failed}</dd>
        </dl>
        {data.error ? <ErrorMessage error={new Error(data.error)} /> : null}
      </section>
      {data.errors.length > 0 ? (
        <section aria-labelledby="import-failures-title" className="section">
          <h2 id="import-failures-title">Rows that failed</h2>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Rows that failed, with why</caption>
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {data.errors.map((e) => (
                  <tr key={e.row}>
                    <th scope="row">{e.row}</th>
                    <td className="break-anywhere">{e.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
      {done ? (
        <p>
          <Link to="/audience">See the contacts</Link>
        </p>
      ) : null}
    </>
  );
}

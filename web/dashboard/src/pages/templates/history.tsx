// A template's versions, newest first: when, who last wrote each one, which is current and which published;
// one version viewed (its preview and HTML), and a revert to it, which starts a new current draft copied from
// it and leaves the published version sending.
import { useEffect, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from '../../api/client.ts';
import { HtmlPreview } from '../../ui/html-preview.tsx';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { Badge, ErrorMessage, Loading } from '../../ui/feedback.tsx';
import { formatTime, Time } from '../../ui/time.tsx';
import { renderWithSamples, type VariableRow } from './preview.ts';
import {
  TEMPLATES,
  useAuthorName,
  useVersions,
  type Template,
  type TemplateVersion,
  type VersionItem,
} from './queries.ts';

export function VersionHistory({
  template,
  samples,
  dirty,
  onReverted,
}: {
  template: Template;
  samples: VariableRow[];
  dirty: boolean;
  onReverted: () => Promise<void>;
}) {
  const versions = useVersions(template.id);
  const authorOf = useAuthorName();
  const client = useQueryClient();
  const [viewing, setViewing] = useState<VersionItem | null>(null);
  // Read again whenever the template changes (a save, a publish, a revert).
  useEffect(() => {
    void client.invalidateQueries({ queryKey: [TEMPLATES, 'versions', template.id] });
  }, [client, template.id, template.current_version_id, template.updated_at]);
  const revert = async (version: VersionItem) => {
    await post(`/templates/${template.id}/versions/${version.id}/revert`);
    await client.invalidateQueries({ queryKey: [TEMPLATES, 'versions', template.id] });
    await onReverted();
  };
  return (
    <section aria-labelledby="template-history-title" className="section">
      <h2 id="template-history-title">Version history</h2>
      <p className="hint">
        Saving a published version starts a new draft; saving a draft changes it in place. Reverting copies an older
        version into a new draft: the published version keeps sending until you publish.
      </p>
      <ErrorMessage error={versions.error} />
      {versions.isPending ? <Loading /> : null}
      {versions.data ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Versions</caption>
            <thead>
              <tr>
                <th scope="col">Saved</th>
                <th scope="col">Author</th>
                <th scope="col">Subject</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.data.data.map((version) => {
                const author = authorOf(version.author);
                const label = `version of ${formatTime(version.updated_at)}`;
                return (
                  <tr key={version.id}>
                    <th scope="row">
                      <Time value={version.updated_at} stacked />
                    </th>
                    <td className="break-anywhere">
                      {author.name}
                      {author.detail ? <div className="muted small-text">{author.detail}</div> : null}
                    </td>
                    <td className="break-anywhere">{version.subject ?? <span className="muted">—</span>}</td>
                    <td>
                      {version.current ? <Badge tone="info">current</Badge> : null}{' '}
                      {version.published ? <Badge tone="good">published</Badge> : null}
                      {!version.published && version.published_at ? (
                        <div className="muted small-text">
                          was published <Time value={version.published_at} />
                        </div>
                      ) : null}
                    </td>
                    <td className="row-actions">
                      <button
                        type="button"
                        className="button small"
                        aria-label={`View the ${label}`}
                        onClick={() => setViewing(version)}
                      >
                        View
                      </button>
                      {version.current ? null : (
                        <ConfirmButton
                          label="Revert"
                          accessibleName={`Revert to the ${label}`}
                          title="Revert to this version?"
                          confirmLabel="Revert to a new draft"
                          danger={false}
                          onConfirm={() => revert(version)}
                        >
                          <p>
                            A new draft is made from this version and opened in the editor
                            {dirty ? ', replacing your unsaved changes' : ''}. The published version keeps sending until
                            you publish.
                          </p>
                        </ConfirmButton>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      <VersionView template={template} version={viewing} samples={samples} onClose={() => setViewing(null)} />
    </section>
  );
}

function VersionView({
  template,
  version,
  samples,
  onClose,
}: {
  template: Template;
  version: VersionItem | null;
  samples: VariableRow[];
  onClose: () => void;
}) {
  const whole = useQuery({
    queryKey: [TEMPLATES, 'version', template.id, version?.id],
    queryFn: () => get<TemplateVersion>(`/templates/${template.id}/versions/${version!.id}`),
    enabled: version !== null,
  });
  const data = whole.data;
  const rows: VariableRow[] = (data?.variables ?? []).map((v) => ({
    key: v.key,
    type: v.type === 'number' ? 'number' : 'string',
    fallback: v.fallback_value === null ? '' : String(v.fallback_value),
    sample: samples.find((s) => s.key === v.key)?.sample ?? '',
  }));
  const rendered = data
    ? renderWithSamples({ html: data.html, text: data.text ?? '', subject: data.subject ?? '' }, rows)
    : null;
  return (
    <Dialog open={version !== null} title="A version of the template" onClose={onClose}>
      <div className="version-view">
        <ErrorMessage error={whole.error} />
        {data && rendered ? (
          <>
            <dl className="facts">
              <dt>Saved</dt>
              <dd>
                <Time value={data.updated_at} />
              </dd>
              <dt>Subject</dt>
              <dd className="break-anywhere">{data.subject ?? '—'}</dd>
              <dt>From</dt>
              <dd className="break-anywhere">{data.from ?? '—'}</dd>
              <dt>Variables</dt>
              <dd>{data.variables.map((v) => v.key).join(', ') || '—'}</dd>
            </dl>
            <HtmlPreview className="template-preview" title="Version preview" html={rendered.html} />
            <details>
              <summary>HTML</summary>
              <pre>{data.html}</pre>
            </details>
          </>
        ) : (
          <Loading />
        )}
      </div>
      <div className="actions">
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}

// The template's variables as an editable table: key, type, fallback (saved with the template) and a sample
// value (the editor's own, for the preview and a test send). Each control is named by its row's key.
import type { VariableRow, VariableType } from './preview.ts';

export function Variables({ rows, onChange }: { rows: VariableRow[]; onChange: (rows: VariableRow[]) => void }) {
  const update = (index: number, change: Partial<VariableRow>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  const nameOf = (row: VariableRow, index: number) => row.key || `variable ${index + 1}`;
  return (
    <section aria-labelledby="template-variables-title" className="section">
      <div className="section-header">
        <h2 id="template-variables-title">Variables</h2>
        <button
          type="button"
          className="button small"
          onClick={() => onChange([...rows, { key: '', type: 'string', fallback: '', sample: '' }])}
        >
          Add a variable
        </button>
      </div>
      <p className="hint">
        A send gives each variable’s value; without one, its fallback is used. Sample values fill the preview and a test
        send, and are not saved.
      </p>
      {rows.length === 0 ? (
        <p className="muted">No variables declared.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Variables</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Type</th>
                <th scope="col">Fallback</th>
                <th scope="col">Sample value</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row, index) => (
                // Rows have no identity of their own until saved; their order is theirs.
                <tr key={index}>
                  <td>
                    <input
                      aria-label={`Key of ${nameOf(row, index)}`}
                      value={row.key}
                      maxLength={50}
                      pattern="[A-Za-z0-9_]+"
                      onChange={(e) => update(index, { key: e.target.value })}
                    />
                  </td>
                  <td>
                    <select
                      aria-label={`Type of ${nameOf(row, index)}`}
                      value={row.type}
                      onChange={(e) => update(index, { type: e.target.value as VariableType })}
                    >
                      <option value="string">string</option>
                      <option value="number">number</option>
                    </select>
                  </td>
                  <td>
                    <input
                      aria-label={`Fallback of ${nameOf(row, index)}`}
                      value={row.fallback}
                      onChange={(e) => update(index, { fallback: e.target.value })}
                    />
                  </td>
                  <td>
                    <input
                      aria-label={`Sample value of ${nameOf(row, index)}`}
                      value={row.sample}
                      onChange={(e) => update(index, { sample: e.target.value })}
                    />
                  </td>
                  <td className="row-actions">
                    <button
                      type="button"
                      className="button small"
                      aria-label={`Remove ${nameOf(row, index)}`}
                      onClick={() => onChange(rows.filter((_, i) => i !== index))}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

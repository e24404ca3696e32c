// A message's header fields as a table of names and values, in order (a name may repeat), scrollable by
// keyboard when it is wider than the page.

export function HeaderFields({ fields, label }: { fields: { name: string; value: string }[]; label: string }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table>
        <caption className="visually-hidden">{label}, in order</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((field, i) => (
            <tr key={`${field.name}-${i}`}>
              <th scope="row">{field.name}</th>
              <td className="break-anywhere">
                <code>{field.value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

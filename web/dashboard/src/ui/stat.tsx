// One figure as a card among others (`<dl className="stats">`): its label, the number, a detail line, and a
// warning tone when the figure means trouble.
export function Stat({ label, value, detail, tone }: { label: string; value: string; detail?: string; tone?: 'bad' }) {
  return (
    <div className={tone === 'bad' ? 'stat card bad' : 'stat card'}>
      <dt>{label}</dt>
      <dd>
        <strong>{value}</strong>
        {detail ? <span className="muted small-text">{detail}</span> : null}
      </dd>
    </div>
  );
}

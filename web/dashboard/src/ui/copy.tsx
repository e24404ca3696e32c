// A copy button for a value (a key, a secret, a DNS record): its label names what it copies, and it says
// "Copied" to screen readers too. The word stays while the button has focus (at most 10 s: a browser that
// does not focus a clicked button never blurs it), so a reader who looks away for a moment still finds it.
import { useState } from 'react';

export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
    window.setTimeout(() => setState('idle'), 10_000);
  };
  return (
    <span className="copy">
      <button
        type="button"
        className="button small"
        onClick={() => void copy()}
        onBlur={() => setState('idle')}
        aria-label={label}
      >
        Copy
      </button>
      <span aria-live="polite" className="muted small-text">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : ''}
      </span>
    </span>
  );
}

/** A secret or long value in a monospace box the reader can select, with its copy button. */
export function CodeValue({ value, label }: { value: string; label: string }) {
  return (
    <div className="code-value">
      <code>{value}</code>
      <CopyButton value={value} label={label} />
    </div>
  );
}

/**
 * A source text (an email's HTML or text) in a scrolling block, with its copy button above it. The block takes
 * focus, so that a keyboard can scroll it.
 */
export function SourceBlock({ value, label }: { value: string; label: string }) {
  return (
    <>
      <div className="actions">
        <CopyButton value={value} label={label} />
      </div>
      <pre className="source" tabIndex={0}>
        <code>{value}</code>
      </pre>
    </>
  );
}

/**
 * A message's HTML or text part as its source, or a line saying it has none (`missing`, when the default
 * line does not say enough).
 */
export function PartSource({
  part,
  value,
  missing,
}: {
  part: 'HTML' | 'text';
  value: string | null;
  missing?: string;
}) {
  if (!value) return <p className="muted">{missing ?? `This message has no ${part} part.`}</p>;
  return <SourceBlock value={value} label={`Copy the ${part}`} />;
}

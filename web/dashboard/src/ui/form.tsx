// Form fields with their labels tied to their controls, and a form that runs one async action at a time and
// shows its error by the API's message.
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { ErrorMessage } from './feedback.tsx';

export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: ReactNode;
  children: (props: { id: string; 'aria-describedby'?: string }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(hint ? { 'aria-describedby': hintId } : {}) })}
      {hint ? (
        <p id={hintId} className="hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/** A form whose submit runs `action`; while it runs the submit button is disabled; its error is shown above it. */
export function ActionForm({
  action,
  submitLabel,
  children,
  label,
  onCancel,
}: {
  action: (data: FormData) => Promise<unknown>;
  submitLabel: string;
  children: ReactNode;
  label?: string;
  /** Shows a Cancel button beside the submit button (a form in a dialog). */
  onCancel?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    setBusy(true);
    setError(null);
    try {
      await action(new FormData(form));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="form" aria-label={label} onSubmit={(e) => void submit(e)}>
      {children}
      <ErrorMessage error={error} />
      <div className="actions">
        {onCancel ? (
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
        <button type="submit" className="button primary" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}

/** A form field's value as a string ('' when absent). */
export function text(data: FormData, name: string): string {
  const value = data.get(name);
  return typeof value === 'string' ? value.trim() : '';
}

/** A password field's value exactly as typed ('' when absent). */
export function secret(data: FormData, name: string): string {
  const value = data.get(name);
  return typeof value === 'string' ? value : '';
}

/**
 * A select whose options may arrive after the page (a list still loading). It holds the reader's choice
 * itself, so options that arrive later neither reset it nor force the form around it to be drawn again
 * (which would lose what was typed in the other fields). `initial` is offered even when no option names it
 * yet, under its own value as label, until the option that names it arrives.
 */
export function LateSelect({
  name,
  initial,
  anyLabel,
  options,
  ...props
}: {
  name: string;
  initial: string;
  anyLabel: string;
  options: { value: string; label: string }[];
  id: string;
  'aria-describedby'?: string;
}) {
  const [value, setValue] = useState(initial);
  const shown = value && !options.some((o) => o.value === value) ? [...options, { value, label: value }] : options;
  return (
    <select {...props} name={name} value={value} onChange={(e) => setValue(e.target.value)}>
      <option value="">{anyLabel}</option>
      {shown.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

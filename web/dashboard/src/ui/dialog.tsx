// A modal dialog (the browser's own <dialog>: focus kept inside, Escape closes) and a button that asks before
// it does something that cannot be undone.
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ErrorMessage } from './feedback.tsx';

export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} className="dialog">
      {open ? (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      ) : null}
    </dialog>
  );
}

export function ConfirmButton({
  label,
  title,
  confirmLabel,
  children,
  onConfirm,
  danger = true,
  accessibleName,
}: {
  label: string;
  title: string;
  confirmLabel: string;
  children: ReactNode;
  onConfirm: () => Promise<unknown>;
  danger?: boolean;
  /** The button's name for assistive technology when its label alone is ambiguous (in a table row). */
  accessibleName?: string;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setOpen(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className={danger ? 'button danger small' : 'button small'}
        aria-label={accessibleName}
        onClick={() => setOpen(true)}
      >
        {label}
      </button>
      <Dialog open={open} title={title} onClose={() => setOpen(false)}>
        <div className="dialog-body">{children}</div>
        <ErrorMessage error={error} />
        <div className="actions">
          <button type="button" className="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button
            type="button"
            className={danger ? 'button danger' : 'button primary'}
            disabled={busy}
            onClick={() => void confirm()}
          >
            {confirmLabel}
          </button>
        </div>
      </Dialog>
    </>
  );
}

// Keeps unsaved edits from being lost by accident: while `dirty`, leaving the page (a link in the dashboard,
// a reload, closing the tab) asks first. The dashboard's router cannot block navigation, so a link's click is
// caught before the router sees it; the browser's Back button is not caught.
import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { Dialog } from '../../ui/dialog.tsx';

const BASE = '/dashboard';

export function UnsavedGuard({ dirty }: { dirty: boolean }) {
  const navigate = useNavigate();
  const [leavingTo, setLeavingTo] = useState<string | null>(null);

  useEffect(() => {
    if (!dirty) return;
    const beforeUnload = (event: BeforeUnloadEvent) => event.preventDefault();
    const click = (event: MouseEvent) => {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
      if (!(link instanceof HTMLAnchorElement) || link.target === '_blank' || link.hasAttribute('download')) return;
      const url = new URL(link.href);
      if (url.origin !== window.location.origin || !url.pathname.startsWith(`${BASE}/`)) return;
      if (url.pathname === window.location.pathname && url.search === window.location.search) return;
      event.preventDefault();
      event.stopPropagation();
      setLeavingTo(url.pathname.slice(BASE.length) + url.search + url.hash);
    };
    window.addEventListener('beforeunload', beforeUnload);
    // Capturing on the document runs before React's listeners on its root, and stops the router's own.
    document.addEventListener('click', click, true);
    return () => {
      window.removeEventListener('beforeunload', beforeUnload);
      document.removeEventListener('click', click, true);
    };
  }, [dirty]);

  return (
    <Dialog open={leavingTo !== null} title="Leave without saving?" onClose={() => setLeavingTo(null)}>
      <p className="dialog-body">This template has changes that are not saved. Leaving the page loses them.</p>
      <div className="actions">
        <button type="button" className="button primary" onClick={() => setLeavingTo(null)}>
          Stay on the page
        </button>
        <button
          type="button"
          className="button danger"
          onClick={() => {
            const to = leavingTo;
            setLeavingTo(null);
            if (to !== null) void navigate(to);
          }}
        >
          Leave without saving
        </button>
      </div>
    </Dialog>
  );
}

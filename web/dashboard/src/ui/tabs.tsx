// Tabs over one panel at a time, as the ARIA tab pattern has them: arrow keys move between the tabs, only the
// selected tab is in the tab order, and every panel is in the page (hidden unless selected).
import { useState, type ReactNode } from 'react';

export function Tabs<T extends string>({
  id,
  label,
  tabs,
  initial,
  panel,
}: {
  /** Prefixes the tabs' and panels' element ids (unique on the page). */
  id: string;
  label: string;
  tabs: { id: T; label: string }[];
  initial: T;
  /** The selected tab's content (the others are not drawn). */
  panel: (tab: T) => ReactNode;
}) {
  const [tab, setTab] = useState<T>(initial);
  const move = (key: string) => {
    const at = tabs.findIndex((t) => t.id === tab);
    const next =
      key === 'ArrowRight' ? (at + 1) % tabs.length : key === 'ArrowLeft' ? (at + tabs.length - 1) % tabs.length : -1;
    if (next < 0) return;
    const to = tabs[next]!.id;
    setTab(to);
    document.getElementById(`${id}-tab-${to}`)?.focus();
  };
  return (
    <>
      <div role="tablist" aria-label={label} className="tabs" onKeyDown={(e) => move(e.key)}>
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`${id}-tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`${id}-panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            className={tab === t.id ? 'tab selected' : 'tab'}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tabs.map((t) => (
        <div
          key={t.id}
          role="tabpanel"
          id={`${id}-panel-${t.id}`}
          aria-labelledby={`${id}-tab-${t.id}`}
          className="card"
          hidden={tab !== t.id}
        >
          {tab === t.id ? panel(t.id) : null}
        </div>
      ))}
    </>
  );
}

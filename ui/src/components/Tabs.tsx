// A row of tabs (role="tablist"): click, the arrow keys, Home or End switch; each tab controls the panel with id `${idBase}-${tab.id}`.
import type { KeyboardEvent, ReactNode } from "react";

export interface TabSpec<T extends string> {
  id: T;
  label: string;
  testId?: string;
  /** A compact summary after the label (e.g. a count of failures). */
  badge?: ReactNode;
}

export interface TabsProps<T extends string> {
  tabs: TabSpec<T>[];
  value: T;
  onChange: (id: T) => void;
  /** Prefix of the tab and panel ids (tab: `${idBase}-tab-${id}`, panel: `${idBase}-${id}`). */
  idBase: string;
  label: string;
}

export function Tabs<T extends string>({ tabs, value, onChange, idBase, label }: TabsProps<T>) {
  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    const i = tabs.findIndex((t) => t.id === value);
    let to: number;
    if (e.key === "ArrowRight") to = (i + 1) % tabs.length;
    else if (e.key === "ArrowLeft") to = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === "Home") to = 0;
    else if (e.key === "End") to = tabs.length - 1;
    else return;
    e.preventDefault();
    const next = tabs[to];
    onChange(next.id);
    document.getElementById(`${idBase}-tab-${next.id}`)?.focus();
  }

  return (
    <div className="tabs" role="tablist" aria-label={label} onKeyDown={onKeyDown}>
      {tabs.map((t) => (
        <button
          key={t.id}
          type="button"
          role="tab"
          id={`${idBase}-tab-${t.id}`}
          className="tab"
          aria-selected={t.id === value}
          aria-controls={`${idBase}-${t.id}`}
          tabIndex={t.id === value ? 0 : -1}
          onClick={() => onChange(t.id)}
          data-testid={t.testId}
        >
          {t.label}
          {t.badge}
        </button>
      ))}
    </div>
  );
}

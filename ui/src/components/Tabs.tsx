// A row of tabs (role="tablist"): click or arrow keys switch; each tab controls the panel with id `${idBase}-${tab.id}`.
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
    const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (step === 0) return;
    e.preventDefault();
    const i = tabs.findIndex((t) => t.id === value);
    const next = tabs[(i + step + tabs.length) % tabs.length];
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

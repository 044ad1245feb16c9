// The `@`-autocomplete list of the workspace's modules (id and directory) for a textarea given by ref: placed under the textarea, or over it when there is no room below.
import { type CSSProperties, type RefObject, useLayoutEffect, useState } from "react";
import type { ModuleInfo } from "../../api/types";
import { useModuleMentions } from "./useModuleMentions";

export interface ModuleAutocompleteProps {
  inputRef: RefObject<HTMLTextAreaElement | null>;
  value: string;
  onChange: (value: string) => void;
  modules: ModuleInfo[];
  enabled?: boolean;
}

const GAP = 4;
const LIST_HEIGHT = 260;

export function ModuleAutocomplete(props: ModuleAutocompleteProps) {
  const { open, options, active, listId, optionId, setActive, accept, mention } = useModuleMentions(props);
  const [place, setPlace] = useState<CSSProperties>({});
  const { inputRef } = props;

  useLayoutEffect(() => {
    const el = inputRef.current;
    if (!open || !el) return;
    const r = el.getBoundingClientRect();
    const below = window.innerHeight - r.bottom;
    const width = Math.min(Math.max(r.width, 240), 440);
    setPlace(
      below >= Math.min(LIST_HEIGHT, 40 * options.length + 16) || below >= r.top
        ? { top: r.bottom + GAP, left: r.left, width, maxHeight: Math.max(120, below - GAP * 3) }
        : { bottom: window.innerHeight - r.top + GAP, left: r.left, width, maxHeight: Math.max(120, r.top - GAP * 3) },
    );
  }, [open, inputRef, options.length, mention?.start]);

  if (!open) return null;
  return (
    <ul
      className="mention-list"
      role="listbox"
      id={listId}
      aria-label="Modules"
      style={place}
      data-testid="module-autocomplete"
    >
      {options.map((m, i) => (
        <li
          key={m.id}
          id={optionId(i)}
          role="option"
          aria-selected={i === active}
          className={i === active ? "mention-option mention-option-active" : "mention-option"}
          data-testid="module-option"
          data-module={m.id}
          // Keeps the focus in the textarea.
          onMouseDown={(e) => e.preventDefault()}
          onMouseEnter={() => setActive(i)}
          onClick={() => accept(m)}
        >
          <code className="mention-id">{m.id}</code>
          <span className="mention-dir muted small">{m.directory}</span>
        </li>
      ))}
      <li className="mention-hint muted small" role="presentation">
        ↑↓ to choose · Enter or Tab to insert · Esc to close
      </li>
    </ul>
  );
}

// Attaches `@`-autocomplete of modules to any textarea through its ref: it follows the caret, offers the matching modules, and takes arrows, Enter/Tab (accept) and Escape before the textarea's own handlers (Enter to send stays for when the list is closed).
import { type RefObject, useCallback, useEffect, useId, useLayoutEffect, useReducer, useRef, useState } from "react";
import type { ModuleInfo } from "../../api/types";
import { applyMention, matchModules, type Mention, mentionAt } from "../../lib/mentions";

export interface ModuleMentionsOptions {
  inputRef: RefObject<HTMLTextAreaElement | null>;
  value: string;
  onChange: (value: string) => void;
  modules: ModuleInfo[];
  /** Off: no list (e.g. a closed composer). */
  enabled?: boolean;
}

export interface ModuleMentions {
  open: boolean;
  mention: Mention | null;
  options: ModuleInfo[];
  active: number;
  listId: string;
  optionId: (i: number) => string;
  setActive: (i: number) => void;
  accept: (module: ModuleInfo) => void;
}

export function useModuleMentions({
  inputRef,
  value,
  onChange,
  modules,
  enabled = true,
}: ModuleMentionsOptions): ModuleMentions {
  const listId = useId();
  // Caret moves and focus changes do not change the value: they re-render through this.
  const [, refresh] = useReducer((n: number) => n + 1, 0);
  const [active, setActive] = useState(0);
  // Escape closes the list for the mention at this position until another one starts.
  const [dismissedAt, setDismissedAt] = useState<number | null>(null);

  const el = inputRef.current;
  const focused = el !== null && typeof document !== "undefined" && document.activeElement === el;
  const caret = el ? (el.selectionStart ?? value.length) : value.length;
  const mention = enabled && focused && el?.selectionStart === el?.selectionEnd ? mentionAt(value, caret) : null;
  const options = mention ? matchModules(modules, mention.query) : [];
  const open = mention !== null && options.length > 0 && dismissedAt !== mention.start;
  const current = Math.min(active, Math.max(0, options.length - 1));

  // A new mention, or a new query, starts at the first option.
  const key = mention ? `${mention.start}:${mention.query}` : "";
  const lastKey = useRef(key);
  if (lastKey.current !== key) {
    lastKey.current = key;
    if (active !== 0) setActive(0);
    if (dismissedAt !== null && dismissedAt !== mention?.start) setDismissedAt(null);
  }

  // Where the caret goes once the accepted value is in the textarea (set as React commits it, before any next key).
  const pendingCaret = useRef<{ value: string; caret: number } | null>(null);
  const accept = useCallback(
    (module: ModuleInfo) => {
      if (!mention) return;
      const next = applyMention(value, mention, module);
      pendingCaret.current = next;
      onChange(next.value);
    },
    [mention, value, onChange],
  );
  useLayoutEffect(() => {
    const target = inputRef.current;
    const pending = pendingCaret.current;
    if (!target || !pending || target.value !== pending.value) return;
    pendingCaret.current = null;
    target.focus();
    target.setSelectionRange(pending.caret, pending.caret);
    refresh();
  }, [inputRef, value]);

  // The latest state for the native listener, which is attached once per element.
  const live = useRef({ open, options, current, accept, mention });
  live.current = { open, options, current, accept, mention };

  useEffect(() => {
    const target = inputRef.current;
    if (!target) return;
    // A native listener on the textarea runs before React's handlers (delegated at the root),
    // so a key the list takes never reaches the composer's Enter-to-send or global shortcuts.
    const onKeyDown = (e: KeyboardEvent) => {
      const s = live.current;
      if (!s.open || e.isComposing) return;
      const n = s.options.length;
      let handled = true;
      if (e.key === "ArrowDown") setActive((s.current + 1) % n);
      else if (e.key === "ArrowUp") setActive((s.current - 1 + n) % n);
      else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey)
        s.accept(s.options[s.current]);
      else if (e.key === "Escape") setDismissedAt(s.mention?.start ?? null);
      else handled = false;
      if (handled) {
        e.preventDefault();
        e.stopPropagation();
      }
    };
    const events = ["keyup", "click", "focus", "blur", "select", "input"] as const;
    target.addEventListener("keydown", onKeyDown);
    for (const ev of events) target.addEventListener(ev, refresh);
    return () => {
      target.removeEventListener("keydown", onKeyDown);
      for (const ev of events) target.removeEventListener(ev, refresh);
    };
  }, [inputRef, el]);

  // The textarea announces the list it controls.
  useEffect(() => {
    const target = inputRef.current;
    if (!target) return;
    target.setAttribute("aria-autocomplete", "list");
    if (open) {
      target.setAttribute("aria-expanded", "true");
      target.setAttribute("aria-controls", listId);
      target.setAttribute("aria-activedescendant", `${listId}-${current}`);
    } else {
      target.setAttribute("aria-expanded", "false");
      target.removeAttribute("aria-controls");
      target.removeAttribute("aria-activedescendant");
    }
  });

  return { open, mention, options, active: current, listId, optionId: (i) => `${listId}-${i}`, setActive, accept };
}

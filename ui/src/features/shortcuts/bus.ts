// Shortcut actions travel as a window event, so the panel that owns the state (tabs, diff list, composer, Stop) acts on them itself.
import { useEffect, useRef } from "react";
import type { ShortcutAction } from "./shortcuts";

const EVENT = "kiln:shortcut";

export function emitShortcut(action: ShortcutAction): void {
  window.dispatchEvent(new CustomEvent<ShortcutAction>(EVENT, { detail: action }));
}

/** Calls `handler` for each of `actions` while `enabled`. */
export function useShortcut(
  actions: ShortcutAction | ShortcutAction[],
  handler: (action: ShortcutAction) => void,
  enabled = true,
): void {
  const handlerRef = useRef(handler);
  handlerRef.current = handler;
  const key = Array.isArray(actions) ? actions.join(",") : actions;
  useEffect(() => {
    if (!enabled) return;
    const wanted = new Set(key.split(","));
    const listener = (e: Event) => {
      const action = (e as CustomEvent<ShortcutAction>).detail;
      if (wanted.has(action)) handlerRef.current(action);
    };
    window.addEventListener(EVENT, listener);
    return () => window.removeEventListener(EVENT, listener);
  }, [key, enabled]);
}

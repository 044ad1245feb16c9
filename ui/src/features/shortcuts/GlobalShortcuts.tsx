// Listens for shortcut keys on the window: opens the `?` sheet and New session itself, passes the rest on (bus.ts) to the panel that owns them.
import { useEffect, useState } from "react";
import { navigate, paths } from "../../router";
import { emitShortcut, useShortcut } from "./bus";
import { isTypingTarget, matchShortcut } from "./shortcuts";
import { ShortcutSheet } from "./ShortcutSheet";

/** `workspace`: a workspace is open (New session needs one). */
export function GlobalShortcuts({ workspace }: { workspace: boolean }) {
  const [sheet, setSheet] = useState(false);
  // The header's `?` button asks through the bus.
  useShortcut("help", () => setSheet(true));

  useEffect(() => {
    function onKeyDown(e: KeyboardEvent) {
      if (e.defaultPrevented) return;
      // A dialog has the keyboard: its own keys (Esc, Tab) only.
      if (document.querySelector('[aria-modal="true"]')) return;
      const target = e.target as HTMLElement | null;
      // A terminal has the keyboard: every key, Esc and Mod+. included, is the program's in it.
      if (target?.closest?.(".xterm")) return;
      const action = matchShortcut(e, isTypingTarget(target));
      if (!action) return;
      switch (action) {
        case "help":
          setSheet(true);
          break;
        case "new-session":
          if (!workspace) return;
          navigate(paths.newSession);
          break;
        case "leave-field":
          target?.blur();
          break;
        default:
          emitShortcut(action);
      }
      e.preventDefault();
    }
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, [workspace]);

  return sheet ? <ShortcutSheet onClose={() => setSheet(false)} /> : null;
}

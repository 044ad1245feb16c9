// The session screen's shortcuts: 1–5 switch tabs in the order they stand, `/` goes to the Chat tab (the composer focuses itself).
import { useShortcut } from "./bus";
import { type SessionTab, TAB_OF } from "./shortcuts";

export function useSessionShortcuts(onTab: (tab: SessionTab) => void): void {
  useShortcut(["tab-chat", "tab-changes", "tab-gates", "tab-preview", "tab-terminal", "focus-composer"], (action) => {
    const tab = action === "focus-composer" ? "chat" : TAB_OF[action];
    if (tab) onTab(tab);
  });
}

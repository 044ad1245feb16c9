// The app's keyboard shortcuts: the list the `?` sheet shows, and which action a keydown asks for (none while typing, but Escape and Ctrl/⌘+.).
import type { KeyLike } from "./keymap";

export type ShortcutAction =
  | "help"
  | "new-session"
  | "tab-chat"
  | "tab-changes"
  | "tab-gates"
  | "tab-preview"
  | "tab-terminal"
  | "diff-next"
  | "diff-prev"
  | "stop"
  | "focus-composer"
  | "leave-field";

export type SessionTab = "chat" | "changes" | "gates" | "preview" | "terminal";

export interface ShortcutSpec {
  action: ShortcutAction;
  /** Keys as shown on the sheet; "Mod" reads Ctrl or ⌘. */
  keys: string[];
  label: string;
  where: "Anywhere" | "In a session" | "In Changes" | "In a text field";
}

export const SHORTCUTS: ShortcutSpec[] = [
  { action: "help", keys: ["?"], label: "Show these shortcuts", where: "Anywhere" },
  { action: "new-session", keys: ["N"], label: "New session", where: "Anywhere" },
  { action: "tab-chat", keys: ["1"], label: "Chat", where: "In a session" },
  { action: "tab-changes", keys: ["2"], label: "Changes", where: "In a session" },
  // In the order the tabs stand: Chat, Changes, Terminal, Gates, then Preview (a tab or the docked card).
  { action: "tab-terminal", keys: ["3"], label: "Terminal", where: "In a session" },
  { action: "tab-gates", keys: ["4"], label: "Gates", where: "In a session" },
  { action: "tab-preview", keys: ["5"], label: "Preview", where: "In a session" },
  { action: "focus-composer", keys: ["/"], label: "Write a message (focus the composer)", where: "In a session" },
  { action: "stop", keys: ["Mod+."], label: "Stop the running turn, planning or setup", where: "In a session" },
  { action: "diff-next", keys: ["J", "]"], label: "Next file", where: "In Changes" },
  { action: "diff-prev", keys: ["K", "["], label: "Previous file", where: "In Changes" },
  {
    action: "leave-field",
    keys: ["Esc"],
    label: "Leave the text field (then the keys above work)",
    where: "In a text field",
  },
];

const PLAIN: Record<string, ShortcutAction> = {
  "?": "help",
  n: "new-session",
  N: "new-session",
  "1": "tab-chat",
  "2": "tab-changes",
  "3": "tab-terminal",
  "4": "tab-gates",
  "5": "tab-preview",
  "/": "focus-composer",
  j: "diff-next",
  "]": "diff-next",
  k: "diff-prev",
  "[": "diff-prev",
};

export const TAB_OF: Partial<Record<ShortcutAction, SessionTab>> = {
  "tab-chat": "chat",
  "tab-changes": "changes",
  "tab-gates": "gates",
  "tab-preview": "preview",
  "tab-terminal": "terminal",
};

const TEXT_INPUTS = new Set([
  "text",
  "search",
  "url",
  "email",
  "password",
  "number",
  "tel",
  "date",
  "datetime-local",
  "month",
  "time",
  "week",
]);

/** Whether keys typed at this element are text (or a choice) the user is entering. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!target || typeof (target as HTMLElement).tagName !== "string") return false;
  const el = target as HTMLElement;
  const tag = el.tagName.toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  if (tag === "input") return TEXT_INPUTS.has(((el as HTMLInputElement).type || "text").toLowerCase());
  return el.isContentEditable === true || el.getAttribute?.("contenteditable") === "true";
}

/** The action a keydown asks for, or null. `typing`: the key went to a text field. */
export function matchShortcut(e: KeyLike, typing: boolean): ShortcutAction | null {
  if (e.isComposing) return null;
  // Mod+. (the macOS "cancel") stops, from anywhere, the composer included.
  if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key === ".") return "stop";
  if (typing) return e.key === "Escape" && !e.ctrlKey && !e.metaKey && !e.altKey ? "leave-field" : null;
  // Leave the browser's and the system's own combinations alone.
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  return PLAIN[e.key] ?? null;
}

/** "Mod" as this platform writes it. */
export function keyLabel(key: string, mac: boolean): string {
  return key.replace("Mod", mac ? "⌘" : "Ctrl");
}

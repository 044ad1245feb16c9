// Which key sends a composer message: Enter (Shift+Enter makes a newline) or, by a setting kept in localStorage, Ctrl/⌘+Enter.
import { useSyncExternalStore } from "react";

export type SendKey = "enter" | "ctrl-enter";

const KEY = "kiln.sendKey";
/** Fired on window when the setting changes in this page (the storage event covers other tabs). */
const CHANGED = "kiln:send-key";

/** The parts of a keydown the decision needs (a DOM or React KeyboardEvent has them all). */
export interface KeyLike {
  key: string;
  shiftKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  /** True while an input method (Japanese, Chinese, …) is composing: Enter then confirms the composition. */
  isComposing?: boolean;
  keyCode?: number;
}

/** Whether this keydown in the composer sends the message. */
export function isSendKey(e: KeyLike, mode: SendKey): boolean {
  if (e.key !== "Enter") return false;
  // Some browsers report a composition's Enter only through keyCode 229.
  if (e.isComposing || e.keyCode === 229) return false;
  if (e.shiftKey || e.altKey) return false;
  const mod = e.ctrlKey || e.metaKey;
  // Ctrl/⌘+Enter sends in both modes, so muscle memory from the old default still works.
  return mode === "enter" ? true : mod;
}

/** The hint under the composer. */
export function sendHint(mode: SendKey, mac = isMac()): string {
  const ctrl = mac ? "⌘" : "Ctrl";
  return mode === "enter"
    ? "Enter to send · Shift+Enter for a new line"
    : `${ctrl}+Enter to send · Enter for a new line`;
}

export function isMac(): boolean {
  return typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}

export function loadSendKey(): SendKey {
  try {
    return localStorage.getItem(KEY) === "ctrl-enter" ? "ctrl-enter" : "enter";
  } catch {
    return "enter";
  }
}

export function saveSendKey(mode: SendKey): void {
  try {
    if (mode === "enter") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, mode);
  } catch {
    // Storage may be unavailable (private mode): the choice lasts for this page only.
    fallback = mode;
  }
  window.dispatchEvent(new Event(CHANGED));
}

let fallback: SendKey | null = null;

function subscribe(onChange: () => void): () => void {
  window.addEventListener(CHANGED, onChange);
  window.addEventListener("storage", onChange);
  return () => {
    window.removeEventListener(CHANGED, onChange);
    window.removeEventListener("storage", onChange);
  };
}

/** The current send key, following changes made in Settings (or another tab). */
export function useSendKey(): SendKey {
  return useSyncExternalStore(subscribe, () => fallback ?? loadSendKey());
}

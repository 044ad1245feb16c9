// Picks the backend at start-up: Tauri inside the desktop webview, HTTP everywhere else.
import type { Backend } from "./backend";
import { createHttpBackend } from "./http";
import { createTauriBackend } from "./tauri";

export function isTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}

export function createBackend(): Backend {
  return isTauri() ? createTauriBackend() : createHttpBackend();
}

export * from "./backend";

// Browser notifications: whether the user turned them on (localStorage), the permission, asked only from a click, and showing one.
import { useSyncExternalStore } from "react";

const KEY = "kiln.notify";
const CHANGED = "kiln:notify";

export type NotifyStatus = "unsupported" | "denied" | "off" | "on";

export function notificationsSupported(): boolean {
  return typeof window !== "undefined" && typeof window.Notification === "function";
}

function wanted(): boolean {
  try {
    return localStorage.getItem(KEY) === "on";
  } catch {
    return false;
  }
}

function setWanted(on: boolean): void {
  try {
    if (on) localStorage.setItem(KEY, "on");
    else localStorage.removeItem(KEY);
  } catch {
    // Storage refused: the toggle still changes this page's state below.
  }
  window.dispatchEvent(new Event(CHANGED));
}

/** On only when the user asked for them and the browser allows them. */
export function notifyStatus(): NotifyStatus {
  if (!notificationsSupported()) return "unsupported";
  if (Notification.permission === "denied") return "denied";
  return wanted() && Notification.permission === "granted" ? "on" : "off";
}

/** Turns notifications on (asking for permission: call from a click) or off; resolves with the new status. */
export async function toggleNotifications(): Promise<NotifyStatus> {
  if (!notificationsSupported()) return "unsupported";
  if (notifyStatus() === "on") {
    setWanted(false);
    return "off";
  }
  const permission = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
  setWanted(permission === "granted");
  return notifyStatus();
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener(CHANGED, onChange);
  window.addEventListener("storage", onChange);
  return () => {
    window.removeEventListener(CHANGED, onChange);
    window.removeEventListener("storage", onChange);
  };
}

export function useNotifyStatus(): NotifyStatus {
  return useSyncExternalStore(subscribe, notifyStatus);
}

/** Shows a notification when they are on; a click brings the page forward and calls `onClick`. */
export function showNotification(title: string, options: { body: string; tag: string }, onClick: () => void): void {
  if (notifyStatus() !== "on") return;
  try {
    const n = new Notification(title, { body: options.body, tag: options.tag, icon: "./favicon.svg" });
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
  } catch (e) {
    // Some browsers (Android Chrome) only notify from a service worker: there is nothing to show then.
    console.warn("kiln: could not show a notification", e);
  }
}

// Preview helpers: the frame's entry URL for a module, state labels, and which module a preview opens on.
import type { PreviewState, PreviewView } from "../api/types";

/** The gateway's path that turns the secret into its cookie, then redirects to `to`. */
const ENTER_PATH = "/__kiln/enter";

/**
 * The URL that enters the preview on `path`: the gateway's origin, the secret from the preview's
 * own `enterUrl`, and `to` set to the path. Null while no gateway runs.
 */
export function enterUrlFor(preview: PreviewView, path: string | null): string | null {
  if (!preview.origin || !preview.enterUrl) return null;
  if (path === null) return preview.enterUrl;
  let secret: string | null;
  try {
    secret = new URL(preview.enterUrl).searchParams.get("secret");
  } catch {
    secret = null;
  }
  if (!secret) return null;
  const origin = preview.origin.replace(/\/+$/, "");
  return `${origin}${ENTER_PATH}?secret=${encodeURIComponent(secret)}&to=${encodeURIComponent(path)}`;
}

/** The first screen of `moduleId`, or the first module's when it has none listed. */
export function modulePath(preview: PreviewView, moduleId: string): string | null {
  const match = preview.moduleUrls.find((m) => m.moduleId === moduleId) ?? preview.moduleUrls[0];
  return match?.path ?? null;
}

export const STATE_LABELS: Record<PreviewState, string> = {
  stopped: "Stopped",
  starting: "Starting…",
  ready: "Ready",
  restarting: "Restarting…",
  crashed: "Crashed",
};

/** Whether the frame can be shown: the application answers (static files always do). */
export function frameShown(preview: PreviewView): boolean {
  if (!preview.enterUrl) return false;
  return preview.state === "ready" || (preview.kind === "static" && preview.state !== "stopped");
}

/** At most `max` of the last log lines. */
export function lastLines(log: string[], max = 200): string[] {
  return log.length > max ? log.slice(log.length - max) : log;
}

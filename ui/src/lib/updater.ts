// The desktop app's updates: whether to check on start, and a check / download-with-progress /
// install / restart flow over the updater and process plugins, injectable so vitest can drive it.
// The updater plugin verifies the download's signature against tauri.conf.json's public key
// before installing; an unsigned or wrongly signed update fails there and is shown as such.
import { relaunch } from "@tauri-apps/plugin-process";
import { check } from "@tauri-apps/plugin-updater";
import { isTauri } from "../api";

declare global {
  interface Window {
    /** Set by the desktop app before the UI's scripts run (src-tauri/src/desktop.rs). */
    __KILN_DESKTOP__?: { updateCheckOnStart?: boolean };
  }
}

/** Whether to look for an update at start: the desktop app only (never kiln serve), unless KILN_NO_UPDATE_CHECK. */
export function checkOnStart(): boolean {
  return isTauri() && window.__KILN_DESKTOP__?.updateCheckOnStart === true;
}

export interface AvailableUpdate {
  version: string;
  currentVersion: string;
  /** The release notes (Markdown), empty when the release has none. */
  notes: string;
  date?: string;
  /** Downloads (reporting bytes so far and the total when known), verifies and installs. */
  install(onProgress: (downloaded: number, total: number | null) => void): Promise<void>;
}

export interface UpdaterDeps {
  /** null when the app is up to date. */
  check(): Promise<AvailableUpdate | null>;
  relaunch(): Promise<void>;
}

export const pluginUpdater: UpdaterDeps = {
  async check() {
    const update = await check();
    if (!update) return null;
    return {
      version: update.version,
      currentVersion: update.currentVersion,
      notes: update.body ?? "",
      date: update.date,
      async install(onProgress) {
        let downloaded = 0;
        let total: number | null = null;
        await update.downloadAndInstall((event) => {
          if (event.event === "Started") total = event.data.contentLength ?? null;
          if (event.event === "Progress") downloaded += event.data.chunkLength;
          onProgress(downloaded, total);
        });
      },
    };
  },
  relaunch: () => relaunch(),
};

// How the updater plugin refuses a download (its error's text; tests/updater.rs sees these from the
// plugin itself): minisign-verify's "The signature was created with a different key than the one
// provided", "The signature verification failed" (changed bytes), "Invalid encoding in minisign
// data" (an empty or non-minisign signature), and base64's "Invalid symbol 32, offset 4." when the
// signature is not even base64 (the plugin decodes only the signature and key as base64).
const BAD_SIGNATURE = /signature|minisign|public key|pubkey|^Invalid (symbol|last symbol|padding|input length)\b/i;
// A genuine signature of another release than latest.json announces (an old build offered as new).
const OTHER_VERSION = /signed for version \S+ but the update endpoint announced version/i;
// A signature by the right key that names no version (requireSignedVersion): it could be replayed
// under any version number.
const NO_VERSION = /does not specify the version it was signed for/i;

/** What a failed check or install says, in words the user can act on. */
export function describeUpdateError(error: unknown, stage: "check" | "install"): string {
  const raw = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
  // Only a download is verified: a check that mentions a signature found a broken latest.json.
  if (stage === "install" && OTHER_VERSION.test(raw)) {
    return `The update was refused: it is signed for another version than the one offered, so it was not installed. (${raw})`;
  }
  if (stage === "install" && NO_VERSION.test(raw)) {
    return `The update was refused: its signature is not bound to a version, so it was not installed. (${raw})`;
  }
  if (stage === "install" && BAD_SIGNATURE.test(raw)) {
    return `The update was refused: its signature does not match Kiln's release key, so it was not installed. (${raw})`;
  }
  if (stage === "check") return `Could not check for updates: ${raw}`;
  return `The update could not be installed: ${raw}`;
}

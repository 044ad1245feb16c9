// Words for a driver's health as the engine reports it (installed, version, signed in): "unknown" only where the engine could not tell.
import type { DriverStatus } from "../api/types";

/** The health fields, absent from an older engine's answer (read as unknown). */
type Health = Partial<Pick<DriverStatus, "version" | "signedIn">>;

/** "v2.0.14" from "2.0.14 (Claude Code)" or "codex-cli 0.46.0"; the line as given when it holds no version number; "version unknown" when the engine could not tell. */
export function versionLabel(status: Health): string {
  const line = status.version?.trim();
  if (!line) return "version unknown";
  const number = /\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?/.exec(line);
  return number ? `v${number[0]}` : line;
}

/** Signed in or not; an endpoint's is its key ("key stored"/"no key"). */
export function signInLabel(status: Health & { id: string }): string {
  const endpoint = status.id === "openai-compatible";
  if (status.signedIn === true) return endpoint ? "key stored" : "signed in";
  if (status.signedIn === false) return endpoint ? "no key" : "not signed in";
  return endpoint ? "key unknown" : "sign-in unknown";
}

/** The badge tone for the sign-in word: a CLI that is not signed in would fail its first turn. */
export function signInTone(status: Health): string {
  return status.signedIn === true ? "success" : status.signedIn === false ? "warn" : "neutral";
}

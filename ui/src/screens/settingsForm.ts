// The settings form's data: the view as editable fields, the write-only secrets as typed, and the update holding only what changed.
import type { SettingsView, UpdateSettingsArgs } from "../api/types";
import type { SecretInput } from "../components/SecretField";

export type { SecretInput };

/** The editable fields, as the form holds them ("" for unset). */
export interface SettingsForm {
  defaultDriver: string;
  claudePath: string;
  codexPath: string;
  openaiBaseUrl: string;
  openaiModel: string;
  bridgeUrl: string;
  plannerAgent: boolean;
}

export const TEXT_FIELDS = ["defaultDriver", "claudePath", "codexPath", "openaiBaseUrl", "openaiModel", "bridgeUrl"] as const;
export type TextFieldName = (typeof TEXT_FIELDS)[number];

export interface Secrets {
  openaiKey: SecretInput;
  bridgeToken: SecretInput;
}

export const NO_SECRET: SecretInput = { value: "", clear: false };
export const NO_SECRETS: Secrets = { openaiKey: NO_SECRET, bridgeToken: NO_SECRET };

export function formOf(view: SettingsView): SettingsForm {
  return {
    defaultDriver: view.defaultDriver,
    claudePath: view.claudePath ?? "",
    codexPath: view.codexPath ?? "",
    openaiBaseUrl: view.openaiBaseUrl ?? "",
    openaiModel: view.openaiModel ?? "",
    bridgeUrl: view.bridgeUrl ?? "",
    plannerAgent: view.plannerAgent,
  };
}

function secretChange(input: SecretInput): string | undefined {
  if (input.clear) return "";
  return input.value.trim() || undefined;
}

/** The update to send: only fields that differ from the view ("" clears); a secret only when typed or cleared. */
export function changedFields(view: SettingsView, form: SettingsForm, secrets: Secrets = NO_SECRETS): UpdateSettingsArgs {
  const before = formOf(view);
  const args: UpdateSettingsArgs = {};
  for (const field of TEXT_FIELDS) {
    const value = form[field].trim();
    if (value !== before[field].trim()) args[field] = value;
  }
  if (form.plannerAgent !== before.plannerAgent) args.plannerAgent = form.plannerAgent;
  const openaiKey = secretChange(secrets.openaiKey);
  if (openaiKey !== undefined) args.openaiKey = openaiKey;
  const bridgeToken = secretChange(secrets.bridgeToken);
  if (bridgeToken !== undefined) args.bridgeToken = bridgeToken;
  return args;
}

/** Whether a changed address meets a stored secret with no new one given: the server refuses that (INVALID_INPUT). */
export function needsSecret(addressChanged: boolean, fingerprint: string | null, secret: SecretInput): boolean {
  return addressChanged && fingerprint !== null && !secret.value.trim() && !secret.clear;
}

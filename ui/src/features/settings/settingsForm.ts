// The settings form's data (drivers, the ACP agents, command policy, connected application, delivery): the view as editable fields, the write-only secrets as typed, and the update holding only what changed.
import type { CommandPolicy, SettingsView, UpdateSettingsArgs } from "../../api/types";
import type { SecretInput } from "../../components/SecretField";

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
  /** Which commands agents may run. */
  commandPolicy: CommandPolicy;
  deliveryRepository: string;
  /** Comma-separated logins. */
  deliveryReviewers: string;
  deliveryPushMode: string;
  deliveryRemote: string;
  deliveryBase: string;
  deliveryBranchPrefix: string;
  deliveryApiUrl: string;
  /** The custom ACP agent's command line. */
  acpCustomCommand: string;
  /** Binary paths set for ACP presets, by preset id ("" for none). */
  acpPaths: Record<string, string>;
}

export const TEXT_FIELDS = [
  "defaultDriver",
  "claudePath",
  "codexPath",
  "openaiBaseUrl",
  "openaiModel",
  "bridgeUrl",
  "deliveryRepository",
  "deliveryPushMode",
  "deliveryRemote",
  "deliveryBase",
  "deliveryBranchPrefix",
  "deliveryApiUrl",
  "acpCustomCommand",
] as const;
export type TextFieldName = (typeof TEXT_FIELDS)[number] | "deliveryReviewers";

export interface Secrets {
  openaiKey: SecretInput;
  bridgeToken: SecretInput;
  deliveryToken: SecretInput;
  /** The custom ACP agent's environment lines: written whole, never shown back (only the names). */
  acpCustomEnv: SecretInput;
}

export const NO_SECRET: SecretInput = { value: "", clear: false };
export const NO_SECRETS: Secrets = {
  openaiKey: NO_SECRET,
  bridgeToken: NO_SECRET,
  deliveryToken: NO_SECRET,
  acpCustomEnv: NO_SECRET,
};

/** The custom ACP agent's id: its command line is a field, not a path. */
export const ACP_CUSTOM = "acp:custom";

/** "a, b,,c " → ["a", "b", "c"]. */
export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function formOf(view: SettingsView): SettingsForm {
  return {
    defaultDriver: view.defaultDriver,
    claudePath: view.claudePath ?? "",
    codexPath: view.codexPath ?? "",
    openaiBaseUrl: view.openaiBaseUrl ?? "",
    openaiModel: view.openaiModel ?? "",
    bridgeUrl: view.bridgeUrl ?? "",
    plannerAgent: view.plannerAgent,
    commandPolicy: view.commandPolicy,
    deliveryRepository: view.delivery.repository ?? "",
    deliveryReviewers: view.delivery.reviewers.join(", "),
    deliveryPushMode: view.delivery.pushMode,
    deliveryRemote: view.delivery.remote,
    deliveryBase: view.delivery.base,
    deliveryBranchPrefix: view.delivery.branchPrefix,
    deliveryApiUrl: view.delivery.apiUrl,
    acpCustomCommand: view.acpAgents?.find((a) => a.id === ACP_CUSTOM)?.command ?? "",
    acpPaths: Object.fromEntries(
      (view.acpAgents ?? []).filter((a) => a.id !== ACP_CUSTOM).map((a) => [a.id, a.path ?? ""]),
    ),
  };
}

function secretChange(input: SecretInput): string | undefined {
  if (input.clear) return "";
  return input.value.trim() || undefined;
}

/** The update to send: only fields that differ from the view ("" clears); a secret only when typed or cleared. */
export function changedFields(
  view: SettingsView,
  form: SettingsForm,
  secrets: Secrets = NO_SECRETS,
): UpdateSettingsArgs {
  const before = formOf(view);
  const args: UpdateSettingsArgs = {};
  for (const field of TEXT_FIELDS) {
    const value = form[field].trim();
    if (value !== before[field].trim()) args[field] = value;
  }
  if (form.plannerAgent !== before.plannerAgent) args.plannerAgent = form.plannerAgent;
  if (form.commandPolicy !== before.commandPolicy) args.commandPolicy = form.commandPolicy;
  const reviewers = splitList(form.deliveryReviewers);
  if (reviewers.join(",") !== splitList(before.deliveryReviewers).join(",")) args.deliveryReviewers = reviewers;
  const openaiKey = secretChange(secrets.openaiKey);
  if (openaiKey !== undefined) args.openaiKey = openaiKey;
  const bridgeToken = secretChange(secrets.bridgeToken);
  if (bridgeToken !== undefined) args.bridgeToken = bridgeToken;
  const deliveryToken = secretChange(secrets.deliveryToken);
  if (deliveryToken !== undefined) args.deliveryToken = deliveryToken;
  // Lines, not one value: kept as typed (the engine skips blanks and comments).
  if (secrets.acpCustomEnv.clear) args.acpCustomEnv = "";
  else if (secrets.acpCustomEnv.value.trim()) args.acpCustomEnv = secrets.acpCustomEnv.value;
  const paths: Record<string, string> = {};
  for (const [id, path] of Object.entries(form.acpPaths)) {
    if (path.trim() !== (before.acpPaths[id] ?? "").trim()) paths[id] = path.trim();
  }
  if (Object.keys(paths).length > 0) args.acpPaths = paths;
  return args;
}

/** Whether a changed address meets a stored secret with no new one given: the server refuses that (INVALID_INPUT). */
export function needsSecret(addressChanged: boolean, fingerprint: string | null, secret: SecretInput): boolean {
  return addressChanged && fingerprint !== null && !secret.value.trim() && !secret.clear;
}

/** The two command policies, as Settings offers them. */
export const COMMAND_POLICIES: { value: CommandPolicy; label: string; hint: string }[] = [
  {
    value: "workdir",
    label: "Commands in the working copy",
    hint: "Agents run builds and tests and edit files without asking.",
  },
  {
    value: "none",
    label: "No commands",
    hint: "Agents edit files only: their shell tools are turned off.",
  },
];

/** How the confinement reads as a badge: confined, partly, or not at all. */
export function confinementTone(view: SettingsView["confinement"]): { tone: string; label: string } {
  if (!view.available) return { tone: "warn", label: "not confined" };
  if (view.enforcement === "partial") return { tone: "warn", label: `${view.mechanism}, partly` };
  return { tone: "success", label: view.mechanism };
}

type DriverStatus = SettingsView["drivers"][number];

/**
 * The placeholder of a local driver's binary field, agreeing with the driver's status: where
 * it was found (the engine's detail is the path then), or that it was not found. A path set
 * in the field speaks for itself.
 */
export function binaryPlaceholder(status: DriverStatus | undefined): string {
  if (!status) return "searched on PATH";
  return status.available ? `found: ${status.detail}` : "not found on PATH";
}

/** The settings each driver's availability depends on: changing one of them may make it available. */
const DRIVER_FIELDS: Record<string, (keyof UpdateSettingsArgs)[]> = {
  claude: ["claudePath"],
  codex: ["codexPath"],
  "openai-compatible": ["openaiBaseUrl", "openaiModel", "openaiKey"],
  [ACP_CUSTOM]: ["acpCustomCommand", "acpCustomEnv"],
};

/**
 * The driver the update makes the default while it is unavailable (so Save asks first), or
 * null. Not when the same update changes what the driver needs (its path, its endpoint): the
 * answer tells whether that made it available.
 */
export function unavailableDefault(view: SettingsView, changes: UpdateSettingsArgs): DriverStatus | null {
  const next = changes.defaultDriver;
  if (next === undefined) return null;
  const status = view.drivers.find((d) => d.id === next);
  if (!status || status.available) return null;
  // An ACP preset's path is its one setting.
  const fields = DRIVER_FIELDS[next] ?? (next.startsWith("acp:") ? ["acpPaths"] : []);
  if (fields.some((f) => f in changes)) return null;
  return status;
}

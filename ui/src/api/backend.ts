// The Backend interface the UI talks to (desktop or HTTP), its typed command map, and KilnError.
import type {
  AddAttachmentArgs,
  AddModuleArgs,
  AppState,
  ApproveSpecArgs,
  AttachmentView,
  CreateSessionArgs,
  DeleteSessionArgs,
  DeliverArgs,
  DeliveryPlan,
  DeliveryRun,
  DetectionView,
  DiffView,
  EmptyArgs,
  ErrorCode,
  GateResultView,
  GetDiffArgs,
  GetTranscriptArgs,
  KilnEvent,
  ListSessionsArgs,
  ModuleArgs,
  OpenWorkspaceArgs,
  PlanDeliveryArgs,
  PreviewView,
  RemoveAttachmentArgs,
  RestoreCheckpointArgs,
  SaveConfigArgs,
  SaveSpecArgs,
  ServeMode,
  SendMessageArgs,
  SessionIdArgs,
  SessionView,
  SettingsView,
  SpecView,
  StopArgs,
  TranscriptEntry,
  UpdateSessionArgs,
  UpdateSettingsArgs,
  UsageView,
  WorkspaceView,
} from "./types";

/** Every command of contract.md: its argument object and its result. */
export interface CommandMap {
  get_state: { args: EmptyArgs; result: AppState };
  open_workspace: { args: OpenWorkspaceArgs; result: WorkspaceView };
  list_sessions: { args: ListSessionsArgs; result: SessionView[] };
  get_session: { args: SessionIdArgs; result: SessionView };
  create_session: { args: CreateSessionArgs; result: SessionView };
  get_transcript: { args: GetTranscriptArgs; result: TranscriptEntry[] };
  add_module: { args: AddModuleArgs; result: SessionView };
  archive_session: { args: StopArgs; result: SessionView };
  restore_session: { args: SessionIdArgs; result: SessionView };
  reject_session: { args: StopArgs; result: SessionView };
  delete_session: { args: DeleteSessionArgs; result: SessionView | null };
  /** Starts a turn (a running one is stopped first). */
  send_message: { args: SendMessageArgs; result: SessionView };
  /** INVALID_INPUT when no turn runs. */
  stop_turn: { args: SessionIdArgs; result: SessionView };
  /** Runs again the turn that blocked the session; NOT_BLOCKED unless it is blocked. */
  retry_turn: { args: SessionIdArgs; result: SessionView };
  /** SPEC_MISSING when the module has no SPEC.md yet. */
  approve_spec: { args: ApproveSpecArgs; result: SessionView };
  /** A module's specification in the session's working copy (text null when it has none); MODULE_NOT_FOUND. */
  get_spec: { args: ModuleArgs; result: SpecView };
  /**
   * Writes the operator's edit of a module's specification; any edit makes an approval stale.
   * SESSION_RUNNING while a turn runs, MODULE_NOT_FOUND.
   */
  save_spec: { args: SaveSpecArgs; result: SpecView };
  /**
   * Stores a file for the session's agents (at most 10, 5 MB each, png jpg jpeg gif webp md txt
   * json csv pdf svg, content matching the extension): ATTACHMENT_LIMIT, ATTACHMENT_TOO_LARGE,
   * ATTACHMENT_TYPE, ATTACHMENT_EMPTY, ATTACHMENT_MISMATCH, INVALID_INPUT (bad name or base64).
   */
  add_attachment: { args: AddAttachmentArgs; result: AttachmentView };
  /** ATTACHMENT_NOT_FOUND when the session has no such attachment. */
  remove_attachment: { args: RemoveAttachmentArgs; result: SessionView };
  /**
   * Puts the session's working copy back to a checkpoint (0 is the starting point); later
   * checkpoints are kept. CHECKPOINT_NOT_FOUND, INVALID_INPUT, SESSION_RUNNING, SESSION_ARCHIVED,
   * SESSION_DELIVERED.
   */
  restore_checkpoint: { args: RestoreCheckpointArgs; result: SessionView };
  /** Each module's changes against its base, or one module's with moduleId. */
  get_diff: { args: GetDiffArgs; result: DiffView };
  /**
   * The latest result of each gate, per module and gate: spec-schema and module-schema (module
   * null: the whole working copy), then dependencies, typecheck, tests and format per module.
   */
  get_gates: { args: SessionIdArgs; result: GateResultView[] };
  /** Runs every gate of every module of the session now; answers as get_gates does. SESSION_RUNNING while the session runs. */
  check_modules: { args: SessionIdArgs; result: GateResultView[] };
  /** An absent field stays as it is. */
  update_session: { args: UpdateSessionArgs; result: SessionView };
  /** Every turn of the workspace: the total and per role. */
  workspace_usage: { args: EmptyArgs; result: UsageView };
  get_settings: { args: EmptyArgs; result: SettingsView };
  /** An absent field stays as it is, "" clears it; the key is write-only. */
  update_settings: { args: UpdateSettingsArgs; result: SettingsView };
  /** The session's preview as it stands (stopped when none runs). */
  get_preview: { args: SessionIdArgs; result: PreviewView };
  /**
   * Starts the session's preview and its gateway (answers the running one when it runs).
   * PREVIEW_NOT_CONFIGURED when kiln.toml has no `[preview] command` or `root`; NOT_ALLOWED_IN_MODE
   * in self-hosted mode; refused for a closed or deleted session.
   */
  start_preview: { args: SessionIdArgs; result: PreviewView };
  /** Stops the process and the gateway; answers the stopped preview. */
  stop_preview: { args: SessionIdArgs; result: PreviewView };
  /** Stops, then starts it again (a new gateway: a new origin and secret). */
  restart_preview: { args: SessionIdArgs; result: PreviewView };
  /** Starts a read-only review turn of one module (its report lands in SessionView.reviews). */
  review_module: { args: ModuleArgs; result: SessionView };
  /** What delivering to a target would do, with its blockers and the planId a confirmation must carry. */
  plan_delivery: { args: PlanDeliveryArgs; result: DeliveryPlan };
  /**
   * Starts delivering the confirmed plan; answers at once, steps follow as `delivery` events.
   * PLAN_STALE, DELIVERY_BLOCKED, DELIVERY_CONFLICT, TARGET_UNAVAILABLE, BRANCH_MOVED.
   */
  deliver: { args: DeliverArgs; result: DeliveryRun };
  /** The session's latest delivery run, or null when it never ran. */
  get_delivery: { args: SessionIdArgs; result: DeliveryRun | null };
  /**
   * What Kiln detected in the open workspace's own tooling: its modules with every gate's command
   * and where it came from (null: not configured, with a hint), the toolchains this machine has,
   * the setup command, and the kiln.toml that "Save as kiln.toml" would write.
   */
  detect_workspace: { args: EmptyArgs; result: DetectionView };
  /**
   * Writes kiln.toml at the workspace root from the edited set-up (an empty command turns a gate
   * off), reopens the workspace with it and answers the new detection. CONFIG_EXISTS when the
   * workspace has a kiln.toml and `replace` is false, CONFIG_INVALID, SESSION_RUNNING while a turn
   * or a setup runs.
   */
  save_config: { args: SaveConfigArgs; result: DetectionView };
}

export type Command = keyof CommandMap;
export type ArgsOf<C extends Command> = CommandMap[C]["args"];
export type ResultOf<C extends Command> = CommandMap[C]["result"];

/** The engine's error codes plus NETWORK, used when the engine could not be reached at all. */
export type KilnErrorCode = ErrorCode | "NETWORK";

/** What some answers carry besides the code and message. */
export interface KilnErrorDetails {
  /** RATE_LIMITED: the server's Retry-After, in seconds. */
  retryAfterSeconds?: number;
  /** NOT_CONNECTED from `GET /api/state`: the mode of the server that wants a connection. */
  mode?: ServeMode;
}

export class KilnError extends Error {
  readonly code: KilnErrorCode;
  readonly retryAfterSeconds?: number;
  readonly mode?: ServeMode;

  constructor(code: KilnErrorCode, message: string, details: KilnErrorDetails = {}) {
    super(message);
    this.name = "KilnError";
    this.code = code;
    if (details.retryAfterSeconds !== undefined) this.retryAfterSeconds = details.retryAfterSeconds;
    if (details.mode !== undefined) this.mode = details.mode;
  }
}

function isApiErrorShape(value: unknown): value is { code: string; message: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

/** Turns anything thrown or rejected into a KilnError (unknown shapes become INTERNAL). */
export function toKilnError(value: unknown): KilnError {
  if (value instanceof KilnError) return value;
  if (isApiErrorShape(value)) return new KilnError(value.code as KilnErrorCode, value.message);
  if (value instanceof Error) return new KilnError("INTERNAL", value.message);
  if (typeof value === "string") return new KilnError("INTERNAL", value);
  return new KilnError("INTERNAL", "Unexpected error");
}

/** `POST /api/connect`'s answer. */
export interface ConnectResult {
  connected: boolean;
  mode: ServeMode;
  /** When the browser session ends (RFC 3339). */
  expiresAt?: string;
}

export interface Backend {
  readonly kind: "tauri" | "http";
  call<C extends Command>(command: C, args: ArgsOf<C>): Promise<ResultOf<C>>;
  /**
   * `kiln serve` only: opens a browser session (the server sets its cookie). The token is required
   * in self-hosted mode and optional in loopback. TOKEN_INVALID, RATE_LIMITED (retryAfterSeconds).
   * Absent on the desktop, which is always connected and never shows connection UI.
   */
  connect?: (token?: string) => Promise<ConnectResult>;
  /** `kiln serve` only: ends the browser session and clears its cookie. */
  disconnect?: () => Promise<void>;
  /** Starts receiving engine events; returns a function that stops. */
  subscribe(onEvent: (event: KilnEvent) => void): () => void;
  /** Asks the user for a folder; null when cancelled or not supported (browser). */
  pickFolder(): Promise<string | null>;
}

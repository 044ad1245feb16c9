// The Backend interface the UI talks to (desktop or HTTP), typed by the generated CommandMap, and KilnError.
import type { CommandMap, ErrorCode, KilnEvent, ServeMode } from "./types";

/** Every command: its argument object and its result, generated from the engine's operation table. */
export type { CommandMap };

export type Command = keyof CommandMap;
export type ArgsOf<C extends Command> = CommandMap[C]["args"];
export type ResultOf<C extends Command> = CommandMap[C]["result"];

/**
 * The codes only `kiln serve`'s HTTP layer answers with (src-tauri/serve/src/errors.rs, TransportCode;
 * errorWords.test.ts reads them there, so the two cannot drift).
 */
export const TRANSPORT_ERROR_CODES = [
  "HOST_NOT_ALLOWED",
  "CROSS_SITE_REFUSED",
  "NOT_CONNECTED",
  "TOKEN_INVALID",
  "RATE_LIMITED",
  "BODY_TOO_LARGE",
] as const;
export type TransportErrorCode = (typeof TRANSPORT_ERROR_CODES)[number];

/** The engine's error codes, the transport's, and NETWORK, used when the engine could not be reached at all. */
export type KilnErrorCode = ErrorCode | TransportErrorCode | "NETWORK";

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
  /**
   * Starts receiving engine events; returns a function that stops. `onReachable` hears when the
   * stream is lost (the server stopped or the network went) and when it is back. `since`: the
   * events after this id come first (get_state's `lastEvent`, so nothing that happened while
   * the first questions were answered is missed).
   */
  subscribe(
    onEvent: (event: KilnEvent) => void,
    onReachable?: (reachable: boolean) => void,
    since?: number,
  ): () => void;
  /** Asks the user for a folder; null when cancelled or not supported (browser). */
  pickFolder(): Promise<string | null>;
}

// Words for the error codes (the vocabulary's in src-tauri/types/src/error.rs, the HTTP layer's in src-tauri/serve/src/errors.rs): the code is for details, these are what people read.

export const ERROR_WORDS: Record<string, string> = {
  INVALID_INPUT: "The request was not valid",
  INVALID_SESSION_ID: "That is not a valid session id",
  WORKSPACE_NOT_FOUND: "The workspace folder was not found",
  WORKSPACE_NOT_OPEN: "No workspace is open",
  CONFIG_INVALID: "The workspace's kiln.toml is not valid",
  CONFIG_EXISTS: "The workspace already has a kiln.toml",
  TOOLCHAIN_MISSING: "A toolchain the project needs is not installed",
  WORKSPACE_IN_USE: "Another Kiln process is using this workspace",
  MODULE_NOT_FOUND: "That module was not found",
  MODULE_REQUIRED: "Pick a module for this",
  MODULE_ALREADY_IN_SESSION: "That module is already part of the session",
  SESSION_NOT_FOUND: "The session was not found",
  SESSION_DELETED: "The session was deleted",
  SESSION_RUNNING: "The session is busy with a turn",
  SESSION_ARCHIVED: "The session is archived",
  SESSION_DELIVERED: "The session was already delivered",
  SESSION_NOT_ARCHIVED: "The session is not archived",
  UNKNOWN_COMMAND: "Kiln does not know that command",
  HOST_NOT_ALLOWED: "This address is not allowed to reach Kiln",
  ATTACHMENT_LIMIT: "Too many attachments",
  ATTACHMENT_TOO_LARGE: "The attachment is too large",
  ATTACHMENT_TYPE: "That kind of file cannot be attached",
  ATTACHMENT_EMPTY: "The attachment is empty",
  ATTACHMENT_MISMATCH: "The attachment's contents do not match its type",
  DRIVER_NOT_FOUND: "The agent's program is not installed or not found",
  DRIVER_FAILED: "The agent's program failed",
  SPEC_MISSING: "There is no specification yet",
  ATTACHMENT_NOT_FOUND: "The attachment was not found",
  CHECKPOINT_NOT_FOUND: "The checkpoint was not found",
  CONFLICT_NOT_FOUND: "That conflict is no longer in the file",
  CROSS_SITE_REFUSED: "Kiln refused a request from another site",
  NOT_CONNECTED: "Not connected to Kiln",
  TOKEN_INVALID: "The access token is not valid",
  RATE_LIMITED: "Too many requests at once; try again in a moment",
  BODY_TOO_LARGE: "The request is too large",
  NOT_ALLOWED_IN_MODE: "Not allowed in this mode",
  PATH_NOT_ALLOWED: "That path is outside what Kiln may use",
  SECRET_UNREADABLE: "A stored secret could not be read",
  PREVIEW_NOT_CONFIGURED: "No preview is configured for this module",
  DELIVERY_BLOCKED: "Delivery is blocked until the listed problems are fixed",
  DELIVERY_CONFLICT: "The delivery conflicts with changes on the target",
  PLAN_STALE: "The delivery plan is out of date; look at it again",
  TARGET_UNAVAILABLE: "The delivery target cannot be reached",
  BRANCH_MOVED: "The branch moved since the plan was made",
  MODULE_UNKNOWN: "No module has that name or id",
  MODEL_UNKNOWN: "The agent does not offer that model",
  NOT_BLOCKED: "The session is not blocked; there is nothing to retry",
  TERMINAL_NOT_FOUND: "That terminal is gone",
  TERMINAL_LIMIT: "Too many terminals are open: close one first",
  TERMINAL_EXITED: "The terminal's program has exited",
  PERMISSION_NOT_FOUND: "That request is no longer waiting: it was answered, or the turn ended",
  CAPTURE_UNAVAILABLE: "No Chromium is installed to take screenshots of the preview",
  CAPTURE_FAILED: "The screenshot could not be taken",
  SCREENSHOT_NOT_FOUND: "That screenshot is not in this session",
  DATABASE_UNAVAILABLE: "The server cannot reach its database",
  HOST_UNAVAILABLE: "The server running this session did not answer; try again in a few seconds",
  COMMENT_NOT_FOUND: "That comment is gone: it was deleted",
  NOTHING_TO_SEND: "There is no open comment to send",
  NOTHING_TO_UPDATE: "The workspace has not changed since the session's base",
  CONFLICTS_UNRESOLVED: "Conflicts from the update are not resolved",
  GROUP_NOT_FOUND: "That group of candidates is not in this workspace",
  ISSUE_NOT_FOUND: "No such issue in that repository (or the token may not see it)",
  MCP_SERVER_NOT_FOUND: "No MCP server of that name in your Settings",
  OBJECTS_UNAVAILABLE: "The bucket for checkpoints and attachments cannot be reached",
  INTERNAL: "Something went wrong inside Kiln",
  // The UI's own: the request never reached Kiln.
  NETWORK: "Kiln cannot be reached",
};

export function isErrorCode(code: string): boolean {
  return Object.hasOwn(ERROR_WORDS, code);
}

/** Words for a code; an unknown code reads as itself, lowered into a sentence. */
export function errorWords(code: string): string {
  if (isErrorCode(code)) return ERROR_WORDS[code];
  const plain = code.toLowerCase().replace(/_/g, " ");
  return plain.charAt(0).toUpperCase() + plain.slice(1);
}

export interface CodeSplit {
  /** The text with its error codes (and the brackets or backticks around them) taken out. */
  text: string;
  /** The known codes it named, in order, once each. */
  codes: string[];
}

/**
 * Takes the engine's error codes out of a line of text ("… could not start: no claude [DRIVER_NOT_FOUND]",
 * "… `DELIVERY_BLOCKED`"), so the words read alone and the codes can go behind a details toggle.
 */
export function splitCodes(text: string): CodeSplit {
  const codes: string[] = [];
  // Only a code in brackets or backticks, as the engine writes them; bare capitals in prose stay.
  const out = text.replace(
    /\s*(?:\[([A-Z][A-Z0-9_]+)\]|`([A-Z][A-Z0-9_]+)`)/g,
    (whole, a: string | undefined, b: string | undefined) => {
      const code = (a ?? b)!;
      if (!isErrorCode(code)) return whole;
      if (!codes.includes(code)) codes.push(code);
      return "";
    },
  );
  return {
    text: out
      .replace(/\s+([.,;:])/g, "$1")
      .replace(/[ \t]{2,}/g, " ")
      .trim(),
    codes,
  };
}

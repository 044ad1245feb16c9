// A terminal's output stream, which is not in the operation table: a Tauri Channel through `attach_terminal` on the desktop, server-sent events at /api/terminal_stream in the browser. Chunks come as base64 of the raw PTY bytes and leave here as bytes.
import { Channel, invoke } from "@tauri-apps/api/core";
import { KilnError, toKilnError } from "./backend";
import { isTauri } from "./index";
import type { TerminalChunk } from "./types";

/** What an attached terminal hears, decoded. */
export type TerminalStreamEvent =
  | { type: "output"; data: Uint8Array }
  | { type: "exit"; exitCode: number | null }
  /** The browser lost the stream and opened it again: the replay that follows starts the screen over. */
  | { type: "reset" }
  /** The stream could not be opened, or ended without the terminal's exit. */
  | { type: "error"; error: KilnError };

/** The bytes of a base64 text (atob gives one char per byte). Throws on text that is not base64. */
export function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A chunk as the engine sends it (`TerminalChunk`), decoded; null for anything else. */
export function decodeChunk(chunk: unknown): TerminalStreamEvent | null {
  if (typeof chunk !== "object" || chunk === null) return null;
  const c = chunk as { [K in keyof TerminalChunk | "data" | "exitCode"]?: unknown };
  if (c.type === "output" && typeof c.data === "string") {
    try {
      return { type: "output", data: decodeBase64(c.data) };
    } catch {
      return null;
    }
  }
  if (c.type === "exit") return { type: "exit", exitCode: typeof c.exitCode === "number" ? c.exitCode : null };
  return null;
}

/** What the stream needs from the platform; injectable so tests run without a webview or a server. */
export interface TerminalStreamDeps {
  desktop: () => boolean;
  invoke: (command: string, args: Record<string, unknown>) => Promise<unknown>;
  /** A Tauri Channel delivering to `onMessage`, and how to stop hearing it. */
  createChannel: (onMessage: (message: unknown) => void) => { channel: unknown; close: () => void };
  EventSource: typeof EventSource;
}

const defaultDeps: TerminalStreamDeps = {
  desktop: isTauri,
  invoke: (command, args) => invoke(command, args),
  createChannel: (onMessage) => {
    const channel = new Channel<unknown>(onMessage);
    // The engine learns nothing from this: it stops sending when the terminal exits.
    return { channel, close: () => (channel.onmessage = () => {}) };
  },
  EventSource: globalThis.EventSource,
};

const LOST = "The terminal's output stream could not be opened, or was cut off.";

/**
 * Each terminal's `attach_terminal` call in flight on the desktop. The app's side lets the latest
 * attachment replace the one before (whose channel the page dropped), which holds only if the calls
 * arrive in order: two in flight run in parallel there, and the earlier could replace the later,
 * leaving the shown screen unfed. React's development double mount makes two at once. So a view's
 * call waits for the one before it, and is skipped if the view detached meanwhile.
 */
const attaching = new Map<string, Promise<unknown>>();

/**
 * Starts hearing a terminal: first the replay of its recent output, then live output, then `exit`
 * (attaching to an exited terminal gives the replay and `exit`). The answer detaches; the terminal
 * itself runs on.
 */
export function attachTerminal(
  terminalId: string,
  onEvent: (event: TerminalStreamEvent) => void,
  deps: TerminalStreamDeps = defaultDeps,
): () => void {
  let active = true;
  let exited = false;
  const deliver = (message: unknown) => {
    if (!active || exited) return;
    const event = decodeChunk(message);
    if (!event) {
      console.warn("kiln: ignoring a terminal chunk it cannot read", message);
      return;
    }
    if (event.type === "exit") exited = true;
    onEvent(event);
  };

  if (deps.desktop()) {
    const { channel, close } = deps.createChannel(deliver);
    const attach = () => (active ? deps.invoke("attach_terminal", { terminalId, channel }) : undefined);
    const before = attaching.get(terminalId);
    const call = before ? before.then(attach, attach) : Promise.resolve(attach());
    attaching.set(terminalId, call);
    call
      .catch((e: unknown) => {
        if (active) onEvent({ type: "error", error: toKilnError(e) });
      })
      .finally(() => {
        if (attaching.get(terminalId) === call) attaching.delete(terminalId);
      });
    return () => {
      active = false;
      close();
    };
  }

  // Same origin: the connection cookie goes with it, as with /api/events.
  const source = new deps.EventSource(`/api/terminal_stream?terminalId=${encodeURIComponent(terminalId)}`);
  let opened = false;
  source.onopen = () => {
    // A reopened stream replays the ring buffer from its start: the screen starts over.
    if (opened && active && !exited) onEvent({ type: "reset" });
    opened = true;
  };
  source.onmessage = (message: MessageEvent<string>) => {
    let chunk: unknown;
    try {
      chunk = JSON.parse(message.data);
    } catch {
      console.warn("kiln: ignoring a terminal chunk that is not JSON", message.data);
      return;
    }
    deliver(chunk);
    // The server ends the stream after `exit`; without this the browser would open it again.
    if (exited) source.close();
  };
  source.onerror = () => {
    // CONNECTING: the browser opens it again by itself. CLOSED: refused (no such terminal, no connection).
    if (source.readyState === 2 && active && !exited) onEvent({ type: "error", error: new KilnError("NETWORK", LOST) });
  };
  return () => {
    active = false;
    source.close();
  };
}

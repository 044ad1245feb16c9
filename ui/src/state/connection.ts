// The browser's connection to `kiln serve`: start-up (silent connect in loopback, the Connect screen in self-hosted) and noticing a lost one.
import { type ArgsOf, type Backend, type Command, type ResultOf, toKilnError } from "../api/backend";
import type { AppState, ServeMode } from "../api/types";

/** Why the Connect screen shows: first visit, a session that ended under us, or the user's Disconnect. */
export type ConnectReason = "start" | "lost" | "disconnected";

export type Connection =
  /** The first get_state has not answered yet. */
  | { status: "pending" }
  /** The app may call the engine (the desktop app always can). */
  | { status: "connected" }
  /** `kiln serve` wants a connection before anything else. */
  | { status: "needed"; mode: ServeMode; reason: ConnectReason };

export type StartResult = { kind: "ready"; app: AppState } | { kind: "connect"; mode: ServeMode };

/**
 * Fetches get_state. A loopback server without a connection is connected silently (no token);
 * a self-hosted one answers NOT_CONNECTED and the result says a token is needed. Other errors throw.
 */
export async function startApp(backend: Backend): Promise<StartResult> {
  let app: AppState;
  try {
    app = await backend.call("get_state", {});
  } catch (e) {
    const error = toKilnError(e);
    if (error.code === "NOT_CONNECTED" && backend.connect)
      return { kind: "connect", mode: error.mode ?? "self-hosted" };
    throw error;
  }
  if (app.connected !== false || !backend.connect) return { kind: "ready", app };
  if (app.mode === "self-hosted") return { kind: "connect", mode: app.mode };
  await connectSilently(backend.connect);
  return { kind: "ready", app: { ...app, connected: true } };
}

/** Tries of the silent connect, a second apart. */
const SILENT_CONNECT_TRIES = 5;

/**
 * The loopback connect. The server lets one browser have only two connects under way at once
 * (so guesses sent together meet its rate limit), so tabs opening together may be told
 * RATE_LIMITED: those try again a moment later.
 */
async function connectSilently(connect: NonNullable<Backend["connect"]>) {
  for (let tried = 1; ; tried++) {
    try {
      return await connect();
    } catch (e) {
      if (toKilnError(e).code !== "RATE_LIMITED" || tried >= SILENT_CONNECT_TRIES) throw e;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** The backend the screens use: a call that fails with NOT_CONNECTED also calls onLost (the error is still thrown). */
export function guardConnection(backend: Backend, onLost: () => void): Backend {
  if (!backend.connect) return backend;
  const call = async <C extends Command>(command: C, args: ArgsOf<C>): Promise<ResultOf<C>> => {
    try {
      return await backend.call(command, args);
    } catch (e) {
      if (toKilnError(e).code === "NOT_CONNECTED") onLost();
      throw e;
    }
  };
  return { ...backend, call };
}

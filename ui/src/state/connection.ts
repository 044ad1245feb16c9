// The browser's connection to `kiln serve`: start-up (the link's token, else the Connect screen) and noticing a lost one.
import { type ArgsOf, type Backend, type Command, type ResultOf, toKilnError } from "../api/backend";
import type { AppState, ServeMode } from "../api/types";

/** Why the Connect screen shows: first visit, a link whose token was refused, a session that ended under us, or the user's Disconnect. */
export type ConnectReason = "start" | "link" | "lost" | "disconnected";

export type Connection =
  /** The first get_state has not answered yet. */
  | { status: "pending" }
  /** The app may call the engine (the desktop app always can). */
  | { status: "connected" }
  /** `kiln serve` wants a connection before anything else. */
  | { status: "needed"; mode: ServeMode; reason: ConnectReason };

export type StartResult =
  | { kind: "ready"; app: AppState }
  /** `linkRefused`: the page was opened with a link whose token the server did not accept. */
  | { kind: "connect"; mode: ServeMode; linkRefused: boolean };

/**
 * The server's token from the link a loopback `kiln serve` prints (`/?token=…`). It is taken
 * out of the address bar at once, so it stays out of bookmarks, shared addresses and the history.
 */
export function takeLinkToken(location: Location = window.location, history: History = window.history): string | null {
  const url = new URL(location.href);
  const token = url.searchParams.get("token");
  if (token === null) return null;
  url.searchParams.delete("token");
  history.replaceState(history.state, "", `${url.pathname}${url.search}${url.hash}`);
  return token.trim() || null;
}

/**
 * Connects with the link's token when there is one, then fetches get_state. A server that
 * wants a connection (NOT_CONNECTED: either mode, as loopback is no trust boundary) makes the
 * result say so. Other errors throw.
 */
export async function startApp(backend: Backend, linkToken: string | null = null): Promise<StartResult> {
  let linkRefused = false;
  if (linkToken && backend.connect) {
    try {
      await connectWithRetries(backend.connect, linkToken);
    } catch (e) {
      if (toKilnError(e).code !== "TOKEN_INVALID") throw e;
      linkRefused = true;
    }
  }
  let app: AppState;
  try {
    app = await backend.call("get_state", {});
  } catch (e) {
    const error = toKilnError(e);
    if (error.code === "NOT_CONNECTED" && backend.connect)
      return { kind: "connect", mode: error.mode ?? "self-hosted", linkRefused };
    throw error;
  }
  if (app.connected !== false || !backend.connect) return { kind: "ready", app };
  return { kind: "connect", mode: app.mode, linkRefused };
}

/** Tries of the link's connect, a second apart. */
const LINK_CONNECT_TRIES = 5;

/**
 * The link's connect. The server lets one browser have only two connects under way at once
 * (so guesses sent together meet its rate limit), so tabs opening together may be told
 * RATE_LIMITED: those try again a moment later.
 */
async function connectWithRetries(connect: NonNullable<Backend["connect"]>, token: string) {
  for (let tried = 1; ; tried++) {
    try {
      return await connect(token);
    } catch (e) {
      if (toKilnError(e).code !== "RATE_LIMITED" || tried >= LINK_CONNECT_TRIES) throw e;
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

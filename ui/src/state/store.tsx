// React context that owns the app state, the backend, the connection to `kiln serve`, event subscription and the app-level fetch.
import { createContext, type Dispatch, type ReactNode, useCallback, useContext, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { type Backend, KilnError, toKilnError } from "../api/backend";
import type { ServeMode } from "../api/types";
import { type Connection, guardConnection, startApp } from "./connection";
import { type Action, initialState, reducer, type State } from "./reducer";

export interface AppStatus {
  loading: boolean;
  error: KilnError | null;
}

interface StoreValue {
  state: State;
  dispatch: Dispatch<Action>;
  /** The backend; a call answered NOT_CONNECTED also brings back the Connect screen (or reconnects in loopback). */
  backend: Backend;
  appStatus: AppStatus;
  /** Fetches get_state again (after opening a workspace, or to retry). */
  reloadApp: () => Promise<void>;
  /** Whether this browser may call the engine; the desktop app is always connected. */
  connection: Connection;
  /** Opens a browser session with an access token, then loads the app; rejects with a KilnError. */
  connect: (token: string) => Promise<void>;
  /** Ends the browser session and shows the Connect screen; rejects with a KilnError. */
  disconnect: () => Promise<void>;
}

const StoreContext = createContext<StoreValue | null>(null);

export function StoreProvider({ backend: raw, children }: { backend: Backend; children: ReactNode }) {
  const [state, dispatch] = useReducer(reducer, initialState);
  const [appStatus, setAppStatus] = useState<AppStatus>({ loading: true, error: null });
  const [connection, setConnection] = useState<Connection>({ status: "pending" });
  const mode = useRef<ServeMode | null>(null);
  const wasConnected = useRef(false);

  const reloadApp = useCallback(async () => {
    setAppStatus((s) => ({ ...s, loading: true }));
    try {
      const start = await startApp(raw);
      if (start.kind === "connect") {
        mode.current = start.mode;
        setConnection({ status: "needed", mode: start.mode, reason: wasConnected.current ? "lost" : "start" });
      } else {
        mode.current = start.app.mode;
        wasConnected.current = true;
        dispatch({ type: "appLoaded", app: start.app });
        setConnection({ status: "connected" });
      }
      setAppStatus({ loading: false, error: null });
    } catch (e) {
      setAppStatus({ loading: false, error: toKilnError(e) });
    }
  }, [raw]);

  // A call answered NOT_CONNECTED: loopback connects again silently, self-hosted asks for a token.
  const onLost = useRef(() => {});
  onLost.current = () => {
    if (mode.current === "loopback") void reloadApp();
    else setConnection({ status: "needed", mode: mode.current ?? "self-hosted", reason: "lost" });
  };
  const backend = useMemo(() => guardConnection(raw, () => onLost.current()), [raw]);

  const live = connection.status === "connected";
  useEffect(() => (live ? raw.subscribe((event) => dispatch({ type: "event", event })) : undefined), [raw, live]);

  useEffect(() => {
    void reloadApp();
  }, [reloadApp, state.epoch]);

  const connect = useCallback(
    async (token: string) => {
      if (!raw.connect) return;
      await raw.connect(token);
      // Loading, then the app or the start-up error (not the Connect screen again).
      setConnection({ status: "pending" });
      await reloadApp();
    },
    [raw, reloadApp],
  );

  const disconnect = useCallback(async () => {
    if (!raw.disconnect) return;
    await raw.disconnect();
    setConnection({ status: "needed", mode: mode.current ?? "self-hosted", reason: "disconnected" });
  }, [raw]);

  const value = useMemo(
    () => ({ state, dispatch, backend, appStatus, reloadApp, connection, connect, disconnect }),
    [state, backend, appStatus, reloadApp, connection, connect, disconnect],
  );
  return <StoreContext.Provider value={value}>{children}</StoreContext.Provider>;
}

export function useStore(): StoreValue {
  const value = useContext(StoreContext);
  if (!value) throw new Error("useStore must be used inside <StoreProvider>");
  return value;
}

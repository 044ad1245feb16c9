// The app's providers: the query client (server state), the backend and connection to `kiln serve` (one context, changes only with the connection), UI-local state (another), and the event subscription.
import { QueryClientProvider, type QueryClient, useQueryClient } from "@tanstack/react-query";
import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useReducer,
  useRef,
  useState,
} from "react";
import { type Backend, type KilnError, toKilnError } from "../api/backend";
import type { AppState, AttachmentView, ServeMode, SessionView, WorkspaceView } from "../api/types";
import { addAttachment, putApp, putSessionAnswer, putWorkspace, removeSession } from "./cache";
import { type Connection, guardConnection, startApp, takeLinkToken } from "./connection";
import { applyEvent } from "./events";
import { keys, makeQueryClient } from "./queries";
import { initialState, reducer, type State, type UiAction } from "./reducer";

export interface AppStatus {
  loading: boolean;
  error: KilnError | null;
}

/** An operation's answer for the query cache, or a change of UI-local state. */
export type Action =
  | UiAction
  | { type: "workspaceChanged"; workspace: WorkspaceView }
  | { type: "sessionUpserted"; session: SessionView }
  | { type: "sessionRemoved"; sessionId: string }
  | { type: "attachmentAdded"; sessionId: string; attachment: AttachmentView };

export interface BackendValue {
  /** The backend; a call answered NOT_CONNECTED also brings back the Connect screen (or reconnects in loopback). */
  backend: Backend;
  /** Writes an answer into the query cache (sessions, workspace) or changes UI-local state. Stable. */
  dispatch: (action: Action) => void;
  appStatus: AppStatus;
  /** Fetches get_state again (after opening a workspace, or to retry). */
  reloadApp: () => Promise<void>;
  /** Whether this browser may call the engine; the desktop app is always connected. */
  connection: Connection;
  /** Opens a browser session with an access token, then loads the app; rejects with a KilnError. */
  connect: (token: string) => Promise<void>;
  /** Ends the browser session and shows the Connect screen; rejects with a KilnError. */
  disconnect: () => Promise<void>;
  /** False while the event stream is lost (the server stopped or restarts): the page says so and pauses actions. */
  reachable: boolean;
}

interface UiValue {
  state: State;
}

const BackendContext = createContext<BackendValue | null>(null);
const UiContext = createContext<UiValue | null>(null);

/** `client`: the query client (tests pass a fresh one each); by default one is made for this provider. */
export function StoreProvider({
  backend,
  client,
  children,
}: {
  backend: Backend;
  client?: QueryClient;
  children: ReactNode;
}) {
  const [own] = useState(() => client ?? makeQueryClient());
  return (
    <QueryClientProvider client={client ?? own}>
      <Store raw={backend}>{children}</Store>
    </QueryClientProvider>
  );
}

function Store({ raw, children }: { raw: Backend; children: ReactNode }) {
  const client = useQueryClient();
  const [state, uiDispatch] = useReducer(reducer, initialState);
  const [appStatus, setAppStatus] = useState<AppStatus>({ loading: true, error: null });
  const [connection, setConnection] = useState<Connection>({ status: "pending" });
  const mode = useRef<ServeMode | null>(null);
  const wasConnected = useRef(false);
  // The token of the link the page was opened with: used by the first start only.
  const linkToken = useRef<string | null | undefined>(undefined);
  if (linkToken.current === undefined) linkToken.current = raw.connect ? takeLinkToken() : null;

  const reloadApp = useCallback(async () => {
    setAppStatus((s) => (s.loading ? s : { ...s, loading: true }));
    try {
      const token = linkToken.current ?? null;
      linkToken.current = null;
      const start = await startApp(raw, token);
      if (start.kind === "connect") {
        mode.current = start.mode;
        const reason = start.linkRefused ? "link" : wasConnected.current ? "lost" : "start";
        setConnection({ status: "needed", mode: start.mode, reason });
      } else {
        mode.current = start.app.mode;
        wasConnected.current = true;
        putApp(client, start.app);
        setConnection((c) => (c.status === "connected" ? c : { status: "connected" }));
      }
      setAppStatus((s) => (s.loading || s.error ? { loading: false, error: null } : s));
    } catch (e) {
      setAppStatus({ loading: false, error: toKilnError(e) });
    }
  }, [raw, client]);

  // A call answered NOT_CONNECTED: the browser session ended, so the Connect screen asks for a token again.
  const onLost = useRef(() => {});
  onLost.current = () => {
    setConnection({ status: "needed", mode: mode.current ?? "self-hosted", reason: "lost" });
  };
  const backend = useMemo(() => guardConnection(raw, () => onLost.current()), [raw]);

  const dispatch = useCallback(
    (action: Action) => {
      switch (action.type) {
        case "workspaceChanged":
          return putWorkspace(client, action.workspace);
        case "sessionUpserted":
          return putSessionAnswer(client, action.session);
        case "sessionRemoved":
          return removeSession(client, action.sessionId);
        case "attachmentAdded":
          return addAttachment(client, action.sessionId, action.attachment);
        default:
          return uiDispatch(action);
      }
    },
    [client],
  );

  // Subscribed once per connection; events write the query cache, so only the views reading what changed render.
  const live = connection.status === "connected";
  const reloadRef = useRef(reloadApp);
  reloadRef.current = reloadApp;
  const [reachable, setReachable] = useState(true);
  useEffect(() => {
    if (!live) return undefined;
    let lost = false;
    const stop = raw.subscribe(
      (event) => applyEvent(client, event, () => void reloadRef.current()),
      (up) => {
        setReachable(up);
        // Back after a loss: the server may have restarted, with its sessions (and this browser's) gone.
        if (up && lost) void reloadRef.current();
        lost = !up;
      },
      // From the app state's answer on: a session asked for before the stream opened still
      // hears what changed in between (a view is sent once per change, not again).
      client.getQueryData<AppState>(keys.app)?.lastEvent,
    );
    return () => {
      stop();
      setReachable(true);
    };
  }, [raw, live, client]);

  useEffect(() => {
    void reloadApp();
  }, [reloadApp]);

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

  const backendValue = useMemo(
    () => ({ backend, dispatch, appStatus, reloadApp, connection, connect, disconnect, reachable }),
    [backend, dispatch, appStatus, reloadApp, connection, connect, disconnect, reachable],
  );
  const uiValue = useMemo(() => ({ state }), [state]);
  return (
    <BackendContext.Provider value={backendValue}>
      <UiContext.Provider value={uiValue}>{children}</UiContext.Provider>
    </BackendContext.Provider>
  );
}

/** The backend, dispatch and connection: re-renders only when the connection or the app's start-up status changes. */
export function useBackend(): BackendValue {
  const value = useContext(BackendContext);
  if (!value) throw new Error("useBackend must be used inside <StoreProvider>");
  return value;
}

/** UI-local state (drafts, "Show archived"). */
export function useUi(): State {
  const value = useContext(UiContext);
  if (!value) throw new Error("useUi must be used inside <StoreProvider>");
  return value.state;
}

/** The backend context and UI-local state together; server state is read with the query hooks (useApp, useSession…). */
export function useStore(): BackendValue & { state: State } {
  return { ...useBackend(), state: useUi() };
}

// React context that owns the app state, the backend, event subscription and the app-level fetch.
import { createContext, type Dispatch, type ReactNode, useCallback, useContext, useEffect, useMemo, useReducer, useState } from "react";
import { type Backend, KilnError, toKilnError } from "../api/backend";
import { type Action, initialState, reducer, type State } from "./reducer";

export interface AppStatus {
  loading: boolean;
  error: KilnError | null;
}

interface StoreValue {
  state: State;
  dispatch: Dispatch<Action>;
  backend: Backend;
  appStatus: AppStatus;
  /** Fetches get_state again (after opening a workspace, or to retry). */
  reloadApp: () => Promise<void>;
}

const StoreContext = createContext<StoreValue | null>(null);

export function StoreProvider({ backend, children }: { backend: Backend; children: ReactNode }) {
  const [state, dispatch] = useReducer(reducer, initialState);
  const [appStatus, setAppStatus] = useState<AppStatus>({ loading: true, error: null });

  useEffect(() => backend.subscribe((event) => dispatch({ type: "event", event })), [backend]);

  const reloadApp = useCallback(async () => {
    setAppStatus((s) => ({ ...s, loading: true }));
    try {
      const app = await backend.call("get_state", {});
      dispatch({ type: "appLoaded", app });
      setAppStatus({ loading: false, error: null });
    } catch (e) {
      setAppStatus({ loading: false, error: toKilnError(e) });
    }
  }, [backend]);

  useEffect(() => {
    void reloadApp();
  }, [reloadApp, state.epoch]);

  const value = useMemo(
    () => ({ state, dispatch, backend, appStatus, reloadApp }),
    [state, backend, appStatus, reloadApp],
  );
  return <StoreContext.Provider value={value}>{children}</StoreContext.Provider>;
}

export function useStore(): StoreValue {
  const value = useContext(StoreContext);
  if (!value) throw new Error("useStore must be used inside <StoreProvider>");
  return value;
}

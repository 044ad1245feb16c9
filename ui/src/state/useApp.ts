// The app state (version, mode, open workspace, recent workspaces) from the query cache: written by the start-up and `workspace` events, never fetched here.
import { skipToken, useQuery } from "@tanstack/react-query";
import type { AppState } from "../api/types";
import { keys } from "./queries";

/** null until the first get_state answered. */
export function useApp(): AppState | null {
  const { data } = useQuery<AppState>({ queryKey: keys.app, queryFn: skipToken });
  return data ?? null;
}

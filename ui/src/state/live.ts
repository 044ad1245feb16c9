// A session's live view from `live` events (the agent's text not yet in the transcript, provider trouble being retried, a running command's output): the latest per session, held in the query cache, read with useLive.
import { skipToken, type QueryClient, useQuery } from "@tanstack/react-query";
import type { LiveView } from "../api/types";
import { keys } from "./queries";

/** Keeps the latest view; one with no text, status or running command's output clears it. */
export function putLive(client: QueryClient, live: LiveView) {
  const cleared = live.text === null && live.status === null && !live.output;
  client.setQueryData<LiveView | null>(keys.live(live.sessionId), cleared ? null : live);
}

/**
 * The agent's text reached the transcript: the live copy of it goes at once (its own clear
 * follows on the engine's next event), so the same words never show twice. A status stays.
 */
export function settleLiveText(client: QueryClient, sessionId: string) {
  const held = client.getQueryData<LiveView | null>(keys.live(sessionId));
  if (!held || held.text === null) return;
  const settled: LiveView | null = held.status === null && !held.output ? null : { ...held, text: null };
  client.setQueryData<LiveView | null>(keys.live(sessionId), settled);
}

/** The session's live view, or null when nothing is under way (never fetched: events only). */
export function useLive(sessionId: string): LiveView | null {
  const { data } = useQuery<LiveView | null>({
    queryKey: keys.live(sessionId),
    queryFn: skipToken,
    staleTime: Infinity,
  });
  return data ?? null;
}

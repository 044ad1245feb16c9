// A session's checkpoints as this page heard of them (`checkpoint` events): a count that changes each time its files are recorded or restored, so what shows its files (the diff) asks again then, not on a guess.
import { skipToken, type QueryClient, useQuery } from "@tanstack/react-query";
import { keys } from "./queries";

/** A checkpoint was made or restored to: the count moves on. */
export function putCheckpoint(client: QueryClient, sessionId: string) {
  client.setQueryData<number>(keys.checkpoints(sessionId), (heard) => (heard ?? 0) + 1);
}

/** How many checkpoints of the session this page heard of (0 before the first): a key that changes with its files. */
export function useCheckpointMark(sessionId: string): number {
  const { data } = useQuery<number>({
    queryKey: keys.checkpoints(sessionId),
    queryFn: skipToken,
    staleTime: Infinity,
  });
  return data ?? 0;
}

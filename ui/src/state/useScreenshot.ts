// A session's screenshot's PNG, base64 (get_screenshot), for thumbnails: a screenshot never changes, so it is fetched once.
import { useQuery } from "@tanstack/react-query";
import { useBackend } from "./store";

export function useScreenshotPng(sessionId: string, screenshotId: number): string | null {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: ["ws", "screenshot", sessionId, screenshotId],
    queryFn: async () => (await backend.call("get_screenshot", { sessionId, screenshotId })).pngBase64,
    staleTime: Infinity,
    retry: false,
  });
  return query.data ?? null;
}

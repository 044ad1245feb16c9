// A session's screenshot as a data URL (get_screenshot), for thumbnails: a screenshot never changes, so it is fetched once.
import { useQuery } from "@tanstack/react-query";
import { useBackend } from "./store";

export function useScreenshotUrl(sessionId: string, screenshotId: number): string | null {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: ["ws", "screenshot", sessionId, screenshotId],
    queryFn: async () => {
      const image = await backend.call("get_screenshot", { sessionId, screenshotId });
      return `data:image/png;base64,${image.pngBase64}`;
    },
    staleTime: Infinity,
    retry: false,
  });
  return query.data ?? null;
}

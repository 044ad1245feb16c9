// A screenshot's PNG, fetched with `get_screenshot` once and kept by id (a screenshot never changes): as a data URL for an <img>, or base64 for a canvas.
import { useQuery } from "@tanstack/react-query";
import { toKilnError } from "../api/backend";
import { keys } from "./queries";
import { useBackend } from "./store";

export interface ScreenshotImageHandle {
  /** `data:image/png;base64,…` once fetched. */
  src: string | null;
  loading: boolean;
  error: string | null;
}

export function useScreenshotImage(sessionId: string, screenshotId: number): ScreenshotImageHandle {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: keys.screenshot(sessionId, screenshotId),
    queryFn: () => backend.call("get_screenshot", { sessionId, screenshotId }),
    staleTime: Infinity,
    select: (image) => `data:image/png;base64,${image.pngBase64}`,
  });
  return {
    src: query.data ?? null,
    loading: query.isPending,
    error: query.error ? toKilnError(query.error).message : null,
  };
}

/** The PNG alone, base64 (the same cached answer), for thumbnails drawn on a canvas. */
export function useScreenshotPng(sessionId: string, screenshotId: number): string | null {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: keys.screenshot(sessionId, screenshotId),
    queryFn: () => backend.call("get_screenshot", { sessionId, screenshotId }),
    staleTime: Infinity,
    retry: false,
    select: (image) => image.pngBase64,
  });
  return query.data ?? null;
}

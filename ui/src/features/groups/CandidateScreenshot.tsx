// A candidate's newest preview screenshot (get_screenshot, as a PNG image) when one was taken after a turn; until then, a note that there is none.
import { useQuery } from "@tanstack/react-query";
import { useBackend } from "../../state/store";

export function CandidateScreenshot({ sessionId, screenshotId }: { sessionId: string; screenshotId: number | null }) {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: ["ws", "screenshot", sessionId, screenshotId],
    queryFn: () => backend.call("get_screenshot", { sessionId, screenshotId: screenshotId ?? 0 }),
    enabled: screenshotId !== null,
    // A screenshot never changes: a newer one has another id.
    staleTime: Infinity,
  });
  if (screenshotId === null) {
    return (
      <div className="candidate-shot candidate-shot-none muted small" data-testid="candidate-screenshot-none">
        No screenshot yet
      </div>
    );
  }
  const image = query.data;
  return (
    <div className="candidate-shot" data-testid="candidate-screenshot" data-screenshot-id={screenshotId}>
      {image ? (
        <img
          src={`data:image/png;base64,${image.pngBase64}`}
          alt={`The preview after its latest turn (${image.screenshot.pagePath})`}
          width={image.screenshot.width}
          height={image.screenshot.height}
        />
      ) : (
        <span className="muted small">
          {query.isError ? "The screenshot could not be read" : "Loading the screenshot…"}
        </span>
      )}
    </div>
  );
}

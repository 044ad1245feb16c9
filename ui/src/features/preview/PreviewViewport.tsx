// The preview card's body: the application's frame when it answers, else what is happening (starting, crashed with why, stopped), and the log.
import { type RefObject, useEffect, useRef } from "react";
import type { PreviewView } from "../../api/types";
import { frameShown, lastLines } from "../../lib/preview";
import { Loading } from "../../components/Loading";

export interface PreviewViewportProps {
  preview: PreviewView | null;
  /** Starting it was refused (the card shows why): nothing is on its way. */
  refused?: boolean;
  /** The frame's source: the entry URL of the selected module's screen. */
  url: string | null;
  /** Bumped by Reload: the frame is made again, so it loads `url` again. */
  reloads: number;
  moduleId: string;
  logShown: boolean;
  /** The application's frame, for picking in it. */
  frameRef?: RefObject<HTMLIFrameElement | null>;
  /** The frame waits for a pick: it is outlined. */
  picking?: boolean;
}

/** The last lines of the process's output, kept scrolled to the end. */
export function PreviewLog({ lines }: { lines: string[] }) {
  const ref = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const pre = ref.current;
    if (pre) pre.scrollTop = pre.scrollHeight;
  }, [lines]);
  const shown = lastLines(lines);
  return (
    <pre ref={ref} className="preview-log" data-testid="preview-log" tabIndex={0} aria-label="The preview's output">
      {shown.length ? shown.join("\n") : "No output yet."}
    </pre>
  );
}

function Placeholder({ preview, refused }: { preview: PreviewView | null; refused: boolean }) {
  if (!preview && refused) return <p className="muted">The preview did not start.</p>;
  if (!preview || preview.state === "starting") return <Loading label="Starting the preview…" />;
  if (preview.state === "restarting") return <Loading label="The application exited: starting it again…" />;
  if (preview.state === "crashed") {
    return (
      <div className="preview-crash" role="alert">
        <strong>The preview crashed.</strong>
        <p className="preview-message" data-testid="preview-message">
          {preview.message ?? "The application exited."}
        </p>
      </div>
    );
  }
  if (preview.state === "stopped") {
    return (
      <p className="muted" data-testid="preview-message">
        The preview is stopped{preview.message && preview.message !== "stopped" ? `: ${preview.message}` : "."} Start it
        again to see the application.
      </p>
    );
  }
  return <Loading label="Waiting for the gateway…" />;
}

export function PreviewViewport({
  preview,
  refused = false,
  url,
  reloads,
  moduleId,
  logShown,
  frameRef,
  picking = false,
}: PreviewViewportProps) {
  const showFrame = preview !== null && url !== null && frameShown(preview);
  // A crash always shows its log; otherwise the Log button asks for it.
  const log = preview && (logShown || preview.state === "crashed") ? preview.log : null;
  return (
    <div className="preview-viewport" data-log={log ? "shown" : undefined}>
      <div className="preview-stage">
        {showFrame ? (
          <iframe
            key={`${url}#${reloads}`}
            ref={frameRef}
            className={picking ? "preview-frame preview-frame-picking" : "preview-frame"}
            src={url}
            title={`Preview of ${moduleId}`}
            // Everything an application needs, but never navigating Kiln's own window away.
            sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads"
            referrerPolicy="no-referrer"
            data-testid="preview-frame"
          />
        ) : (
          <div className="preview-placeholder">
            <Placeholder preview={preview} refused={refused} />
          </div>
        )}
      </div>
      {log && <PreviewLog lines={log} />}
    </div>
  );
}

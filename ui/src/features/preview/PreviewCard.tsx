// The preview card: the session's application, its state, log and controls (picking an element or a region included); docked beside the chat, in its own tab, or filling the window.
import { useEffect, useRef, useState } from "react";
import type { SessionModule } from "../../api/types";
import type { PreviewLayout } from "../../lib/layout";
import { openExternal } from "../../lib/openExternal";
import { enterUrlFor, frameShown, modulePath } from "../../lib/preview";
import type { PreviewHandle } from "../../state/usePreview";
import { ErrorMessage } from "../../components/ErrorMessage";
import { PreviewToolbar } from "./PreviewToolbar";
import { PreviewViewport } from "./PreviewViewport";
import { PickBar } from "./PickBar";
import { usePick } from "./usePick";

export interface PreviewCardProps {
  sessionId: string;
  handle: PreviewHandle;
  modules: SessionModule[];
  /** The selected module: its first screen shows, and the diff is filtered to it. */
  moduleId: string;
  onModuleChange: (moduleId: string) => void;
  /** Stops the preview and closes the card. */
  onClose: () => void;
  /** Where the card sits (beside the chat or as a tab), and the switch between the two. */
  layout?: PreviewLayout;
  onLayoutChange?: (layout: PreviewLayout) => void;
}

export function PreviewCard({
  sessionId,
  handle,
  modules,
  moduleId,
  onModuleChange,
  onClose,
  layout,
  onLayoutChange,
}: PreviewCardProps) {
  const { preview, error, busy } = handle;
  const [reloads, setReloads] = useState(0);
  const [logShown, setLogShown] = useState(false);
  const [fullScreen, setFullScreen] = useState(false);
  const url = preview ? enterUrlFor(preview, modulePath(preview, moduleId)) : null;
  // Reload and Open need an application that answers.
  const liveUrl = preview && frameShown(preview) ? url : null;
  // Before any answer: starting, unless the start was refused.
  const state = preview?.state ?? (error ? "stopped" : "starting");
  const frame = useRef<HTMLIFrameElement>(null);
  const pick = usePick(sessionId, moduleId, frame, preview?.origin ?? null, `${url}#${reloads}#${liveUrl !== null}`);

  useEffect(() => {
    if (!fullScreen) return;
    const onKey = (e: KeyboardEvent) => {
      // Escape while picking cancels the pick only.
      if (e.key === "Escape" && !pick.mode) setFullScreen(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [fullScreen, pick.mode]);

  const bridge = preview?.bridge ?? null;
  return (
    <section
      className={fullScreen ? "preview-card preview-card-full" : "preview-card"}
      aria-label="Preview"
      data-testid="preview-card"
      data-state={state}
      data-layout={fullScreen ? "full" : layout}
    >
      <PreviewToolbar
        state={state}
        modules={modules}
        moduleId={moduleId}
        onModuleChange={onModuleChange}
        url={liveUrl}
        onReload={() => setReloads((n) => n + 1)}
        logShown={logShown}
        onToggleLog={() => setLogShown((v) => !v)}
        fullScreen={fullScreen}
        onToggleFullScreen={() => setFullScreen((v) => !v)}
        layout={layout}
        onLayoutChange={onLayoutChange}
        onOpen={() => liveUrl && openExternal(liveUrl)}
        onRestart={() => void handle.restart()}
        onClose={onClose}
        busy={busy !== null}
        picking={pick.mode}
        onPick={(mode) => (pick.mode === mode ? pick.cancel() : pick.start(mode))}
        pickDisabled={!liveUrl || pick.capturing}
      />
      <PickBar pick={pick} />
      {error && (
        <div className="preview-error">
          <ErrorMessage error={error} testId="preview-error" />
          {error.code === "PREVIEW_NOT_CONFIGURED" && (
            <p className="hint">
              Add a <code>[preview]</code> section with a <code>command</code> (or a <code>root</code> of static files)
              to the workspace's <code>kiln.toml</code>.
            </p>
          )}
        </div>
      )}
      <PreviewViewport
        preview={preview}
        refused={error !== null && preview === null}
        url={url}
        reloads={reloads}
        moduleId={moduleId}
        logShown={logShown}
        frameRef={frame}
        picking={pick.mode !== null}
      />
      {bridge && (
        <p className="preview-bridge small muted" data-testid="preview-bridge">
          Data from <code>{bridge.url}</code>: {bridge.forwarded} forwarded · {bridge.unavailable} unavailable
          {bridge.refused > 0 && ` · ${bridge.refused} refused`}
        </p>
      )}
    </section>
  );
}

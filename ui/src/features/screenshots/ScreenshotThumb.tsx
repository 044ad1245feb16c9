// One screenshot of the preview as a small image that opens large in a dialog; its PNG comes through `get_screenshot` (cached by id).
import { useState } from "react";
import type { ScreenshotView } from "../../api/types";
import { Modal } from "../../components/Modal";
import { shotDescription, shotLabel } from "../../lib/screenshots";
import { useScreenshotImage } from "../../state/useScreenshot";

export interface ScreenshotThumbProps {
  sessionId: string;
  shot: ScreenshotView;
  /** Shown under the image (the filmstrip's label); none in the transcript, whose row names the checkpoint. */
  caption?: string;
}

export function ScreenshotThumb({ sessionId, shot, caption }: ScreenshotThumbProps) {
  const [open, setOpen] = useState(false);
  const image = useScreenshotImage(sessionId, shot.id);
  const description = shotDescription(shot);
  return (
    <>
      <button
        type="button"
        className="shot-thumb"
        data-testid="screenshot-thumb"
        data-checkpoint={shot.checkpoint ?? undefined}
        title={`${description} — click to view large`}
        onClick={() => setOpen(true)}
      >
        {image.src ? (
          <img src={image.src} alt={description} width={shot.width} height={shot.height} />
        ) : (
          <span className="shot-thumb-placeholder muted small">{image.error ? "unavailable" : "…"}</span>
        )}
        {caption && <span className="shot-thumb-caption">{caption}</span>}
      </button>
      {open && (
        <Modal
          title={`${shotLabel(shot)}: ${shot.moduleId ?? "the preview"}`}
          onClose={() => setOpen(false)}
          className="modal-shot"
        >
          {image.src ? (
            <img className="shot-large" src={image.src} alt={description} data-testid="screenshot-large" />
          ) : (
            <p className="muted">{image.error ?? "Loading…"}</p>
          )}
          <p className="muted small">
            {shot.pagePath} · {shot.width} × {shot.height}
          </p>
        </Modal>
      )}
    </>
  );
}

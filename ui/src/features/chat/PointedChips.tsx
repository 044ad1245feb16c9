// Chips of what the operator pointed at in the preview: a thumbnail of the screenshot and the element's selector (or "Region"), with remove while it waits in the composer.
import { useEffect, useRef, useState } from "react";
import type { ScreenshotKind } from "../../api/types";
import { pointedLabel } from "../../lib/pointed";
import { useScreenshotPng } from "../../state/useScreenshot";
import { Icon } from "../../components/Icon";

export interface PointedChipItem {
  screenshotId: number;
  kind: ScreenshotKind;
  pagePath: string;
  selector?: string | null;
  width?: number;
  height?: number;
}

/**
 * The screenshot drawn on a canvas: the page's policy allows images from Kiln's own origin only
 * (`img-src 'self'`, no `data:` or `blob:`), and a bitmap decoded from the bytes is no load.
 */
function Thumbnail({ sessionId, screenshotId, label }: { sessionId: string; screenshotId: number; label: string }) {
  const png = useScreenshotPng(sessionId, screenshotId);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [drawn, setDrawn] = useState(false);
  useEffect(() => {
    if (!png || typeof createImageBitmap !== "function") return;
    let current = true;
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    createImageBitmap(new Blob([bytes], { type: "image/png" }))
      .then((bitmap) => {
        const target = canvas.current;
        const context = target?.getContext("2d");
        if (!current || !target || !context) return;
        // The whole screenshot, centred, as object-fit: contain would (an element is often wide and flat).
        const scale = Math.min(target.width / bitmap.width, target.height / bitmap.height);
        const [w, h] = [bitmap.width * scale, bitmap.height * scale];
        context.drawImage(bitmap, (target.width - w) / 2, (target.height - h) / 2, w, h);
        setDrawn(true);
      })
      .catch(() => {});
    return () => {
      current = false;
    };
  }, [png]);
  return (
    <canvas
      ref={canvas}
      className="pointed-thumb"
      width={80}
      height={52}
      role="img"
      aria-label={`Screenshot of ${label}`}
      data-testid="pointed-thumb"
      data-drawn={drawn ? "true" : undefined}
    />
  );
}

export interface PointedChipsProps {
  sessionId: string;
  items: PointedChipItem[];
  /** Absent in the transcript, where the chips are what was sent. */
  onRemove?: (screenshotId: number) => void;
  disabled?: boolean;
}

export function PointedChips({ sessionId, items, onRemove, disabled = false }: PointedChipsProps) {
  if (items.length === 0) return null;
  return (
    <ul className="chips pointed-chips" aria-label="Pointed at in the preview" data-testid="pointed-chips">
      {items.map((item) => {
        const label = pointedLabel(item.kind, item.selector, item.width, item.height);
        return (
          <li
            key={item.screenshotId}
            className="chip pointed-chip"
            data-testid="pointed-chip"
            data-kind={item.kind}
            title={`${label} on ${item.pagePath}`}
          >
            <Thumbnail sessionId={sessionId} screenshotId={item.screenshotId} label={label} />
            <code className="pointed-label">{label}</code>
            {onRemove && (
              <button
                type="button"
                className="chip-remove"
                onClick={() => onRemove(item.screenshotId)}
                disabled={disabled}
                aria-label={`Remove ${label}`}
                title={`Remove ${label}`}
                data-testid="remove-pointed"
              >
                <Icon name="cross" size={12} />
              </button>
            )}
          </li>
        );
      })}
    </ul>
  );
}

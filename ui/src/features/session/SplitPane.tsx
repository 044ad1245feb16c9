// Two panes side by side with a draggable divider (pointer, or arrow keys when focused); the end pane's share is remembered.
// Without an end pane the start pane fills it alone, staying mounted where it was (its state, scroll and drafts kept).
import {
  type CSSProperties,
  type KeyboardEvent,
  type PointerEvent,
  type ReactNode,
  useCallback,
  useRef,
  useState,
} from "react";
import { clampPreviewWidth, loadPreviewWidth, PREVIEW_WIDTH, savePreviewWidth } from "../../lib/layout";

export interface SplitPaneProps {
  start: ReactNode;
  /** null: no end pane and no divider. */
  end: ReactNode | null;
  /** What the divider separates, for screen readers. */
  label: string;
}

/** A keyboard step, and a larger one with Shift. */
const STEP = 0.02;
const BIG_STEP = 0.1;

export function SplitPane({ start, end, label }: SplitPaneProps) {
  const [share, setShare] = useState(loadPreviewWidth);
  const [dragging, setDragging] = useState(false);
  const rootRef = useRef<HTMLDivElement>(null);

  const commit = useCallback((next: number) => {
    const clamped = clampPreviewWidth(next);
    setShare(clamped);
    savePreviewWidth(clamped);
  }, []);

  function shareAt(clientX: number): number | null {
    const box = rootRef.current?.getBoundingClientRect();
    if (!box || box.width === 0) return null;
    return (box.right - clientX) / box.width;
  }

  function onPointerDown(e: PointerEvent<HTMLDivElement>) {
    if (e.button !== 0) return;
    e.preventDefault();
    // Capture keeps the drag going over the preview's frame, which would otherwise take the events.
    e.currentTarget.setPointerCapture?.(e.pointerId);
    setDragging(true);
  }

  function onPointerMove(e: PointerEvent<HTMLDivElement>) {
    if (!dragging) return;
    const next = shareAt(e.clientX);
    if (next !== null) setShare(clampPreviewWidth(next));
  }

  function onPointerUp(e: PointerEvent<HTMLDivElement>) {
    if (!dragging) return;
    setDragging(false);
    e.currentTarget.releasePointerCapture?.(e.pointerId);
    const next = shareAt(e.clientX);
    commit(next ?? share);
  }

  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    const step = e.shiftKey ? BIG_STEP : STEP;
    // The divider moves the way the arrow points: left widens the end pane.
    if (e.key === "ArrowLeft") commit(share + step);
    else if (e.key === "ArrowRight") commit(share - step);
    else if (e.key === "Home") commit(PREVIEW_WIDTH.max);
    else if (e.key === "End") commit(PREVIEW_WIDTH.min);
    else return;
    e.preventDefault();
  }

  const percent = Math.round(share * 100);
  const single = end === null || end === false || end === undefined;
  const className = single ? "split-pane split-single" : dragging ? "split-pane split-dragging" : "split-pane";
  return (
    <div ref={rootRef} className={className} style={{ "--split-end": `${percent}%` } as CSSProperties}>
      <div className="split-start">{start}</div>
      {!single && (
        <>
          <div
            className="split-divider"
            role="separator"
            aria-orientation="vertical"
            aria-label={label}
            aria-valuemin={Math.round(PREVIEW_WIDTH.min * 100)}
            aria-valuemax={Math.round(PREVIEW_WIDTH.max * 100)}
            aria-valuenow={percent}
            tabIndex={0}
            onPointerDown={onPointerDown}
            onPointerMove={onPointerMove}
            onPointerUp={onPointerUp}
            onPointerCancel={onPointerUp}
            onKeyDown={onKeyDown}
            title="Drag, or use the arrow keys, to resize"
            data-testid="split-divider"
          />
          <div className="split-end">{end}</div>
        </>
      )}
    </div>
  );
}

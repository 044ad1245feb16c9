// A panel that slides over the right edge of a narrow window (the session's details): Esc, the close button or a click outside closes it.
import { type KeyboardEvent, type ReactNode, useEffect, useRef } from "react";
import { createPortal } from "react-dom";
import { Icon } from "../../components/Icon";

export interface DrawerProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
}

export function Drawer({ title, onClose, children, testId }: DrawerProps) {
  const panelRef = useRef<HTMLDivElement>(null);
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;

  // Focus goes into the drawer, and back to what opened it when it closes.
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    panelRef.current?.focus();
    return () => {
      if (previous && document.contains(previous)) previous.focus();
    };
  }, []);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== "Escape") return;
    e.stopPropagation();
    onCloseRef.current();
  };

  return createPortal(
    <div className="drawer-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={panelRef}
        className="drawer"
        role="dialog"
        aria-modal="true"
        aria-label={title}
        tabIndex={-1}
        onKeyDown={onKeyDown}
        data-testid={testId}
      >
        <div className="drawer-head">
          <h2 className="drawer-title">{title}</h2>
          <button
            type="button"
            className="btn btn-small drawer-close"
            onClick={onClose}
            aria-label={`Close ${title.toLowerCase()}`}
            data-testid="drawer-close"
          >
            <Icon name="cross" size={14} />
          </button>
        </div>
        <div className="drawer-body">{children}</div>
      </div>
    </div>,
    document.body,
  );
}

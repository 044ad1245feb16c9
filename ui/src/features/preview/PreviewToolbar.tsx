// The preview card's toolbar on one line: the state, the module selector, reload and close; log, layout (beside the chat or a tab), full screen, open in browser and restart inline when there is room, else under "More".
import { useEffect, useId, useRef, useState } from "react";
import type { PreviewState, SessionModule } from "../../api/types";
import type { PreviewLayout } from "../../lib/layout";
import type { PickMode } from "../../lib/pointed";
import { STATE_LABELS } from "../../lib/preview";
import { Icon } from "../../components/Icon";

const STATE_BADGES = {
  stopped: "badge",
  starting: "badge badge-info",
  ready: "badge badge-success",
  restarting: "badge badge-warn",
  crashed: "badge badge-danger",
} as const;

export interface PreviewToolbarProps {
  state: PreviewState;
  modules: SessionModule[];
  moduleId: string;
  onModuleChange: (moduleId: string) => void;
  /** The URL the frame shows, null while there is none: reload and open need it. */
  url: string | null;
  onReload: () => void;
  logShown: boolean;
  onToggleLog: () => void;
  fullScreen: boolean;
  onToggleFullScreen: () => void;
  /** Where the card sits: docked beside the chat, or as its own tab (absent: no choice offered). */
  layout?: PreviewLayout;
  onLayoutChange?: (layout: PreviewLayout) => void;
  onOpen: () => void;
  /** Restart (Start when stopped); disabled while a call is in flight. */
  onRestart: () => void;
  onClose: () => void;
  busy: boolean;
  /** What the frame waits for: an element, a region, or nothing. */
  picking?: PickMode | null;
  /** Starts picking (or cancels the same pick); absent: no picking offered. */
  onPick?: (mode: PickMode) => void;
  pickDisabled?: boolean;
}

interface Action {
  key: string;
  label: string;
  title: string;
  onClick: () => void;
  disabled?: boolean;
  pressed?: boolean;
}

function actionsOf(props: PreviewToolbarProps): Action[] {
  const { url, busy, layout, onLayoutChange } = props;
  const list: Action[] = [];
  // Picking folds into More with the other actions when the card is narrow.
  const { onPick } = props;
  if (onPick) {
    const picks = [
      ["pick", "element", "Pick", "Pick element: click an element of the page to send it with your next message"],
      [
        "region",
        "region",
        "Region",
        "Capture region: drag a rectangle over the page to send its screenshot with your next message",
      ],
    ] as const;
    for (const [key, mode, label, title] of picks) {
      list.push({
        key,
        label,
        title,
        onClick: () => onPick(mode),
        pressed: props.picking === mode,
        disabled: props.pickDisabled && props.picking !== mode,
      });
    }
  }
  list.push({
    key: "log-toggle",
    label: "Log",
    title: "The application's output",
    onClick: props.onToggleLog,
    pressed: props.logShown,
  });
  // Full screen covers both places, so where the card docks is chosen outside it.
  if (layout && onLayoutChange && !props.fullScreen) {
    list.push(
      layout === "split"
        ? {
            key: "layout",
            label: "As a tab",
            title: "Give the preview its own tab, at full width",
            onClick: () => onLayoutChange("tab"),
          }
        : {
            key: "layout",
            label: "Beside chat",
            title: "Dock the preview beside the chat, with a divider to resize",
            onClick: () => onLayoutChange("split"),
          },
    );
  }
  list.push(
    {
      key: "fullscreen",
      label: props.fullScreen ? "Exit full screen" : "Full screen",
      title: props.fullScreen ? "Back to the chat (Esc)" : "Fill the window",
      onClick: props.onToggleFullScreen,
      pressed: props.fullScreen,
    },
    {
      key: "open",
      label: "Open in browser",
      title: "Open this screen in a browser tab",
      onClick: props.onOpen,
      disabled: !url,
    },
    {
      key: "restart",
      label: props.state === "stopped" ? "Start" : "Restart",
      title: "Start the application again",
      onClick: props.onRestart,
      disabled: busy,
    },
  );
  return list;
}

/** The secondary actions as a menu, for a toolbar too narrow to show them inline. */
function MoreMenu({ actions }: { actions: Action[] }) {
  const [open, setOpen] = useState(false);
  const rootRef = useRef<HTMLDivElement>(null);
  const menuId = useId();

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!rootRef.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        setOpen(false);
      }
    };
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey, true);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey, true);
    };
  }, [open]);

  return (
    <div className="preview-more" ref={rootRef}>
      <button
        type="button"
        className="btn btn-small"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => setOpen((v) => !v)}
        title="More preview actions"
        data-testid="preview-more"
      >
        More
      </button>
      {open && (
        <div className="preview-menu" role="menu" id={menuId} data-testid="preview-menu">
          {actions.map((a) => (
            <button
              key={a.key}
              type="button"
              role="menuitem"
              className="preview-menu-item"
              disabled={a.disabled}
              aria-pressed={a.pressed}
              title={a.title}
              onClick={() => {
                setOpen(false);
                a.onClick();
              }}
              data-testid={`preview-menu-${a.key}`}
            >
              {a.label}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

export function PreviewToolbar(props: PreviewToolbarProps) {
  const { state, modules, moduleId, url, busy } = props;
  const selectId = useId();
  const actions = actionsOf(props);
  return (
    <div className="preview-toolbar-box">
      <div className="preview-toolbar">
        <span className={STATE_BADGES[state]} data-testid="preview-state" data-state={state} role="status">
          {(state === "starting" || state === "restarting") && <span className="pulse" aria-hidden="true" />}
          {STATE_LABELS[state]}
        </span>
        <label className="preview-module" htmlFor={selectId}>
          <span className="sr-only">Module</span>
          <select
            id={selectId}
            className="input"
            value={moduleId}
            onChange={(e) => props.onModuleChange(e.target.value)}
            data-testid="preview-module"
          >
            {modules.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
        </label>
        <span className="preview-toolbar-gap" />
        <button
          type="button"
          className="btn btn-small"
          onClick={props.onReload}
          disabled={!url}
          title="Load the module's screen again"
          data-testid="preview-reload"
        >
          Reload
        </button>
        {actions.map((a) => (
          <button
            key={a.key}
            type="button"
            className="btn btn-small preview-inline"
            aria-pressed={a.pressed}
            onClick={a.onClick}
            disabled={a.disabled}
            title={a.title}
            data-testid={`preview-${a.key}`}
          >
            {a.label}
          </button>
        ))}
        <MoreMenu actions={actions} />
        <button
          type="button"
          className="btn btn-small preview-close"
          onClick={props.onClose}
          disabled={busy}
          aria-label="Stop the preview and close it"
          title="Stop and close"
          data-testid="preview-close"
        >
          <Icon name="cross" size={14} />
        </button>
      </div>
    </div>
  );
}

// The preview card's toolbar: the state, the module selector, reload, log, full screen, open in browser, restart and close.
import { useId } from "react";
import type { PreviewState, SessionModule } from "../../api/types";
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
  onOpen: () => void;
  /** Restart (Start when stopped); disabled while a call is in flight. */
  onRestart: () => void;
  onClose: () => void;
  busy: boolean;
}

export function PreviewToolbar(props: PreviewToolbarProps) {
  const { state, modules, moduleId, url, busy } = props;
  const selectId = useId();
  const stopped = state === "stopped";
  return (
    <div className="preview-toolbar">
      <span className={STATE_BADGES[state]} data-testid="preview-state" data-state={state} role="status">
        {(state === "starting" || state === "restarting") && <span className="pulse" aria-hidden="true" />}
        {STATE_LABELS[state]}
      </span>
      <label className="preview-module" htmlFor={selectId}>
        <span className="sr-only">Module</span>
        <select id={selectId} className="input" value={moduleId} onChange={(e) => props.onModuleChange(e.target.value)} data-testid="preview-module">
          {modules.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
      </label>
      <span className="preview-toolbar-gap" />
      <button type="button" className="btn btn-small" onClick={props.onReload} disabled={!url} title="Load the module's screen again" data-testid="preview-reload">
        Reload
      </button>
      <button type="button" className="btn btn-small" aria-pressed={props.logShown} onClick={props.onToggleLog} title="The application's output" data-testid="preview-log-toggle">
        Log
      </button>
      <button
        type="button"
        className="btn btn-small"
        aria-pressed={props.fullScreen}
        onClick={props.onToggleFullScreen}
        title={props.fullScreen ? "Back to the chat (Esc)" : "Fill the window"}
        data-testid="preview-fullscreen"
      >
        {props.fullScreen ? "Exit full screen" : "Full screen"}
      </button>
      <button type="button" className="btn btn-small" onClick={props.onOpen} disabled={!url} title="Open this screen in a browser tab" data-testid="preview-open">
        Open in browser
      </button>
      <button type="button" className="btn btn-small" onClick={props.onRestart} disabled={busy} data-testid="preview-restart">
        {stopped ? "Start" : "Restart"}
      </button>
      <button type="button" className="btn btn-small preview-close" onClick={props.onClose} disabled={busy} aria-label="Stop the preview and close it" title="Stop and close" data-testid="preview-close">
        <Icon name="cross" size={14} />
      </button>
    </div>
  );
}

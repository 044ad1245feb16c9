// The app header: Kiln mark, the open workspace (name and root), the serve mode with Disconnect, the notifications bell, the shortcuts sheet, and the theme, Settings and "Switch workspace" buttons.
import type { AppState, ServeMode } from "../api/types";
import { useState } from "react";
import { applyTheme, loadTheme, nextTheme, type ThemeChoice } from "../lib/theme";
import { navigate, paths } from "../router";
import { ServeModeControls } from "../features/connect/ServeModeControls";
import { NotifyToggle } from "../features/attention/NotifyToggle";
import { emitShortcut } from "../features/shortcuts/bus";

const THEME_LABEL: Record<ThemeChoice, string> = {
  system: "Theme: system",
  dark: "Theme: dark",
  light: "Theme: light",
};

export interface HeaderProps {
  app: AppState | null;
  /** The serve mode, known even before a connection (the desktop app's is never self-hosted). */
  mode?: ServeMode | null;
  /** Present while connected to a `kiln serve`: ends the browser session. */
  onDisconnect?: () => Promise<void>;
}

export function Header({ app, mode = null, onDisconnect }: HeaderProps) {
  const workspace = app?.workspace ?? null;
  const [theme, setTheme] = useState<ThemeChoice>(loadTheme);
  const cycleTheme = () => {
    const next = nextTheme(theme);
    applyTheme(next);
    setTheme(next);
  };
  return (
    <header className="app-header">
      <a className="brand" href={workspace ? paths.dashboard : paths.workspace} aria-label="Kiln home">
        <span className="brand-mark" aria-hidden="true" />
        Kiln
      </a>
      {workspace && (
        <div className="header-workspace" data-testid="header-workspace">
          <span className="workspace-name">{workspace.name}</span>
          <code className="workspace-root" title={workspace.root}>
            {workspace.root}
          </code>
        </div>
      )}
      <div className="header-end">
        <ServeModeControls mode={mode} onDisconnect={onDisconnect} />
        {app && (
          <span className="muted small" title={`Transport: ${app.transport}`}>
            v{app.version}
          </span>
        )}
        {workspace && <NotifyToggle />}
        {app && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => emitShortcut("help")}
            data-testid="shortcuts"
            title="Keyboard shortcuts (?)"
            aria-label="Keyboard shortcuts"
          >
            <kbd>?</kbd>
          </button>
        )}
        <button
          type="button"
          className="btn btn-small"
          onClick={cycleTheme}
          data-testid="theme"
          title="Switch between the system, dark and light themes"
        >
          {THEME_LABEL[theme]}
        </button>
        {workspace && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => navigate(paths.settings)}
            data-testid="settings"
          >
            Settings
          </button>
        )}
        {/* A self-hosted server serves only the workspace it was started with. */}
        {workspace && mode !== "self-hosted" && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => navigate(paths.workspace)}
            data-testid="switch-workspace"
          >
            Switch workspace
          </button>
        )}
      </div>
    </header>
  );
}

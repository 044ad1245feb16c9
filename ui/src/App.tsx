// The app shell: header, and the screen chosen from the connection, the hash route and whether a workspace is open; a workspace opened for the first time (no kiln.toml) starts on its set-up.
import { useEffect, useRef } from "react";
import { ErrorMessage } from "./components/ErrorMessage";
import { DesktopTouches } from "./components/DesktopTouches";
import { Header } from "./components/Header";
import { Loading } from "./components/Loading";
import { EmptyState } from "./components/EmptyState";
import { wantsSetup } from "./lib/setup";
import { navigate, parseHash, useRoute, paths } from "./router";
import { ConnectScreen } from "./features/connect/ConnectScreen";
import { Dashboard } from "./features/dashboard/Dashboard";
import { EjectScreen } from "./features/delivery/EjectScreen";
import { GroupScreen } from "./features/groups/GroupScreen";
import { HelpScreen } from "./features/help/HelpScreen";
import { NewSession } from "./features/dashboard/NewSession";
import { OpenWorkspace } from "./features/setup/OpenWorkspace";
import { SessionScreen } from "./features/session/SessionScreen";
import { SettingsScreen } from "./features/settings/SettingsScreen";
import { SetupScreen } from "./features/setup/SetupScreen";
import { useBackend } from "./state/store";
import { useApp } from "./state/useApp";
import { Attention } from "./features/attention/Attention";
import { GlobalShortcuts } from "./features/shortcuts/GlobalShortcuts";

/**
 * A workspace opened for the first time (no kiln.toml, its set-up neither saved nor dismissed here)
 * goes from the dashboard to its set-up, once each time it is opened or the app starts.
 */
function useFirstOpenSetup() {
  const workspace = useApp()?.workspace ?? null;
  const seen = useRef<string | null>(null);
  useEffect(() => {
    if (!workspace || seen.current === workspace.root) return;
    seen.current = workspace.root;
    // Read the hash now: opening a workspace navigates to the dashboard in the same tick.
    if (parseHash(window.location.hash).name === "dashboard" && wantsSetup(workspace)) navigate(paths.setup);
  }, [workspace]);
}

function Screen() {
  const { appStatus, reloadApp, connection } = useBackend();
  const app = useApp();
  const route = useRoute();
  useFirstOpenSetup();

  if (connection.status === "needed") return <ConnectScreen mode={connection.mode} reason={connection.reason} />;
  if (!app) {
    if (appStatus.error) {
      return (
        <section className="screen narrow">
          <h1>Kiln could not start</h1>
          <ErrorMessage error={appStatus.error} onRetry={() => void reloadApp()} />
        </section>
      );
    }
    return <Loading label="Connecting to Kiln…" />;
  }
  if (route.name === "help") return <HelpScreen />;
  if (!app.workspace || route.name === "workspace") return <OpenWorkspace />;
  switch (route.name) {
    case "dashboard":
      return <Dashboard />;
    case "new":
      return <NewSession />;
    case "session":
      return <SessionScreen key={route.id} sessionId={route.id} openPreview={route.preview === true} />;
    case "deliver":
      return <EjectScreen key={route.id} sessionId={route.id} />;
    case "group":
      return <GroupScreen key={route.id} groupId={route.id} />;
    case "settings":
      return <SettingsScreen />;
    case "setup":
      return <SetupScreen />;
    default:
      return (
        <section className="screen">
          <EmptyState
            title="Page not found"
            actions={
              <a className="btn" href={paths.dashboard}>
                Back to sessions
              </a>
            }
          >
            <p>
              Nothing lives at <code>{route.path}</code>.
            </p>
          </EmptyState>
        </section>
      );
  }
}

export function App() {
  const { backend, connection, disconnect, reachable } = useBackend();
  const app = useApp();
  const needed = connection.status === "needed";
  const mode = needed ? connection.mode : (app?.mode ?? null);
  const away = !needed && !reachable;
  return (
    <div className="app">
      <Header
        app={needed ? null : app}
        mode={mode}
        onDisconnect={connection.status === "connected" && backend.disconnect ? disconnect : undefined}
      />
      {away && (
        <div className="reconnecting" role="status">
          <span className="spinner" aria-hidden="true" /> Reconnecting to Kiln… What you see may be out of date, and
          actions are paused until it answers.
        </div>
      )}
      {/* Nothing on the page can reach the server while it is away: no button pretends otherwise. */}
      <main className="app-main" inert={away} aria-busy={away}>
        <Screen />
      </main>
      {!needed && <DesktopTouches />}
      {!needed && <GlobalShortcuts workspace={Boolean(app?.workspace)} />}
      {!needed && <Attention />}
    </div>
  );
}

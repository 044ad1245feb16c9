// Dashboard: the workspace's usage and modules, its set-up (a review link while it has no kiln.toml), the session list with lifecycle actions, and "New session".
import { useEffect, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import { Loading } from "../../components/Loading";
import { ModuleChips } from "../../components/ModuleChips";
import { SessionRow } from "./SessionRow";
import { WorkspaceUsage } from "./WorkspaceUsage";
import { navigate, paths } from "../../router";
import { visibleSessions } from "../../state/reducer";
import { useStore } from "../../state/store";

export function Dashboard() {
  const { backend, dispatch, state } = useStore();
  const workspace = state.app?.workspace ?? null;
  const root = workspace?.root;
  const { includeArchived, epoch } = state;
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<KilnError | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!root) return;
    let cancelled = false;
    setLoading(true);
    setError(null);
    backend
      .call("list_sessions", includeArchived ? { includeArchived: true } : {})
      .then((sessions) => {
        if (!cancelled) dispatch({ type: "sessionsLoaded", sessions });
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(toKilnError(e));
      })
      .finally(() => {
        if (!cancelled) setLoading(false);
      });
    return () => {
      cancelled = true;
    };
  }, [backend, dispatch, root, includeArchived, epoch, attempt]);

  if (!workspace) return null;
  const sessions = visibleSessions(state);
  const newButton = (
    <button type="button" className="btn btn-primary" onClick={() => navigate(paths.newSession)} data-testid="new-session">
      <Icon name="plus" /> New session
    </button>
  );

  return (
    <section className="screen" aria-labelledby="dash-title">
      <div className="screen-head">
        <div>
          <h1 id="dash-title">{workspace.name}</h1>
          <div className="workspace-line">
            <code className="muted small">{workspace.root}</code>
            <WorkspaceUsage />
          </div>
        </div>
        {newButton}
      </div>
      {workspace.configPath === null ? (
        <p className="setup-banner small" data-testid="setup-banner">
          <Icon name="info" size={14} />
          <span>
            Set-up: detected from your repository —{" "}
            <a href={paths.setup} data-testid="setup-link">
              review
            </a>
          </span>
        </p>
      ) : (
        <p className="setup-config small muted">
          Set-up from <code title={workspace.configPath}>kiln.toml</code> —{" "}
          <a href={paths.setup} data-testid="setup-link">
            review
          </a>
        </p>
      )}
      <ModuleChips modules={workspace.modules} />

      <div className="toolbar">
        <h2 className="section-title">Sessions</h2>
        <label className="checkbox">
          <input
            type="checkbox"
            data-testid="show-archived"
            checked={includeArchived}
            onChange={(e) => dispatch({ type: "setIncludeArchived", value: e.target.checked })}
          />
          Show archived
        </label>
      </div>

      {error && <ErrorMessage error={error} onRetry={() => setAttempt((a) => a + 1)} />}
      {loading && sessions.length === 0 && !error ? (
        <Loading label="Loading sessions…" />
      ) : sessions.length === 0 && !error ? (
        <EmptyState title={includeArchived ? "No sessions at all yet" : "No active sessions"} actions={newButton}>
          <p>
            A session is one change to your codebase, chatted with a coding agent: you write a brief, the planner picks
            the modules it touches, and the agent works on it with checkpoints and gates until it is delivered as code.
          </p>
          {!includeArchived && <p className="muted small">Archived and rejected sessions are hidden; tick “Show archived” to see them.</p>}
        </EmptyState>
      ) : (
        <ul className="session-list" data-testid="session-list" aria-busy={loading}>
          {sessions.map((s) => (
            <SessionRow key={s.id} session={s} />
          ))}
        </ul>
      )}
    </section>
  );
}

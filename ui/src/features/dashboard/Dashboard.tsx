// Dashboard: the workspace's usage, disk use and modules, its set-up (a review link while it has no kiln.toml), the session list with lifecycle actions (a group of candidates as one row holding them, linking to its comparison), and "New session".
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import { Loading } from "../../components/Loading";
import { ModuleChips } from "../../components/ModuleChips";
import { SessionRow } from "./SessionRow";
import { GroupRow } from "../groups/GroupRow";
import { groupSessions } from "../../lib/candidates";
import { useGroups } from "../../state/useGroup";
import { WorkspaceUsage } from "./WorkspaceUsage";
import { DiskUsage } from "./DiskUsage";
import { navigate, paths } from "../../router";
import { useStore } from "../../state/store";
import { useApp } from "../../state/useApp";
import { useSessions } from "../../state/sessions";

export function Dashboard() {
  const { dispatch, state } = useStore();
  const workspace = useApp()?.workspace ?? null;
  const { includeArchived } = state;
  const { sessions, loading, error, retry } = useSessions();
  const groups = useGroups(sessions);

  if (!workspace) return null;
  const newButton = (
    <button
      type="button"
      className="btn btn-primary"
      onClick={() => navigate(paths.newSession)}
      data-testid="new-session"
    >
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
            <DiskUsage />
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

      {error && <ErrorMessage error={error} onRetry={retry} />}
      {loading && sessions.length === 0 && !error ? (
        <Loading label="Loading sessions…" />
      ) : sessions.length === 0 && !error ? (
        <EmptyState title={includeArchived ? "No sessions at all yet" : "No active sessions"} actions={newButton}>
          <p>
            A session is one change to your codebase, chatted with a coding agent: you write a brief, the planner picks
            the modules it touches, and the agent works on it with checkpoints and gates until it is delivered as code.
          </p>
          {!includeArchived && (
            <p className="muted small">Archived and rejected sessions are hidden; tick “Show archived” to see them.</p>
          )}
        </EmptyState>
      ) : (
        <ul className="session-list" data-testid="session-list" aria-busy={loading}>
          {groupSessions(sessions).map((item) =>
            "sessions" in item ? (
              <GroupRow
                key={item.groupId}
                groupId={item.groupId}
                sessions={item.sessions}
                summary={groups.find((g) => g.id === item.groupId)}
              />
            ) : (
              <SessionRow key={item.id} session={item} />
            ),
          )}
        </ul>
      )}
    </section>
  );
}

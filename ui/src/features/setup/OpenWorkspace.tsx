// Open-workspace screen: a path field, Browse… on desktop, the recent workspaces, and a link to the open one's set-up.
import { type FormEvent, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import { navigate, paths } from "../../router";
import { useStore } from "../../state/store";
import { useApp } from "../../state/useApp";

export function OpenWorkspace() {
  const { backend, dispatch, reloadApp } = useStore();
  const app = useApp();
  const current = app?.workspace ?? null;
  const recent = app?.recentWorkspaces ?? [];
  const [path, setPath] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  async function openPath(target: string) {
    const trimmed = target.trim();
    if (!trimmed) return;
    setBusy(true);
    setError(null);
    try {
      const workspace = await backend.call("open_workspace", { path: trimmed });
      dispatch({ type: "workspaceChanged", workspace });
      navigate(paths.dashboard);
      void reloadApp(); // refreshes recentWorkspaces
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  async function browse() {
    setError(null);
    try {
      const picked = await backend.pickFolder();
      if (picked) {
        setPath(picked);
        await openPath(picked);
      }
    } catch (e) {
      setError(toKilnError(e));
    }
  }

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void openPath(path);
  };

  return (
    <section className="screen narrow" aria-labelledby="open-title">
      <h1 id="open-title">Open a workspace</h1>
      <p className="lead">
        A workspace is a folder with your code. Kiln reads its modules and keeps its sessions in <code>.kiln/</code>{" "}
        inside it.
      </p>
      <form className="card form" onSubmit={onSubmit}>
        <label className="field-label" htmlFor="workspace-path">
          Folder path
        </label>
        <div className="row">
          <input
            id="workspace-path"
            className="input grow mono"
            data-testid="workspace-path"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder="/home/you/projects/shop"
            autoComplete="off"
            spellCheck={false}
            autoFocus
          />
          {backend.kind === "tauri" && (
            <button type="button" className="btn" onClick={() => void browse()} disabled={busy} data-testid="browse">
              <Icon name="folder" /> Browse…
            </button>
          )}
          <button
            type="submit"
            className="btn btn-primary"
            disabled={busy || !path.trim()}
            data-testid="open-workspace"
          >
            {busy ? "Opening…" : "Open"}
          </button>
        </div>
        {error && <ErrorMessage error={error} />}
        {current && (
          <p className="small muted">
            Currently open: <code>{current.root}</code> — <a href={paths.dashboard}>back to its sessions</a> ·{" "}
            <a href={paths.setup} data-testid="workspace-setup-link">
              its set-up
            </a>
          </p>
        )}
      </form>

      <h2 className="section-title">Recent workspaces</h2>
      {recent.length === 0 ? (
        <p className="muted">No recent workspaces yet.</p>
      ) : (
        <ul className="recent" data-testid="recent-workspaces">
          {recent.map((root) => (
            <li key={root}>
              <button type="button" className="recent-item" onClick={() => void openPath(root)} disabled={busy}>
                <Icon name="folder" />
                <span className="mono">{root}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

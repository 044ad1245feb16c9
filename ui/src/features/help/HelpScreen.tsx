// Help ▸ Documentation: a short local guide (Kiln has no project site), reachable offline.
import { paths } from "../../router";

export function HelpScreen() {
  return (
    <section className="screen narrow" aria-labelledby="help-title" data-testid="help-screen">
      <h1 id="help-title">Using Kiln</h1>
      <div className="card">
        <h2>Workspaces</h2>
        <p>
          A workspace is a folder with your code and a <code>kiln.toml</code>. Open one with File ▸ Open Workspace… (Ctrl/Cmd+O) or pick
          a recent one under File ▸ Open Recent. Kiln keeps its sessions in <code>.kiln/</code> inside it.
        </p>
        <h2>Sessions</h2>
        <p>
          A session is a change you chat with a coding agent. It works in its own working copy with checkpoints, runs your project's
          gates (typecheck, tests, format), shows the diff and a live preview, and is delivered as code: into the workspace or as a
          pull request.
        </p>
        <h2>Agents</h2>
        <p>
          Claude Code, Codex, or any OpenAI-compatible endpoint. Set paths, endpoints and keys in <a href={paths.settings}>Settings</a>{" "}
          (Ctrl/Cmd+,).
        </p>
        <h2>Updates</h2>
        <p>
          Kiln looks for a signed update when it starts and from Help ▸ Check for Updates…. An update is installed only when its
          signature matches Kiln's release key. Set <code>KILN_NO_UPDATE_CHECK=1</code> to skip the check at start.
        </p>
      </div>
      <p>
        <a className="btn" href={paths.dashboard}>
          Back to sessions
        </a>
      </p>
    </section>
  );
}

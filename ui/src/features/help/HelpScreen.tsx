// Help ▸ Documentation: a short local guide (Kiln has no project site), reachable offline; it describes the surface it runs on (the desktop app's menus, or the browser for `kiln serve`).
import { isTauri } from "../../api";
import { paths } from "../../router";
import { isMac } from "../shortcuts/keymap";
import { keyLabel } from "../shortcuts/shortcuts";

export function HelpScreen({ desktop = isTauri() }: { desktop?: boolean }) {
  const mod = keyLabel("Mod", isMac());
  return (
    <section
      className="screen narrow"
      aria-labelledby="help-title"
      data-testid="help-screen"
      data-surface={desktop ? "desktop" : "browser"}
    >
      <h1 id="help-title">Using Kiln</h1>
      <div className="card">
        <h2>Workspaces</h2>
        {desktop ? (
          <p data-testid="help-workspaces">
            A workspace is a folder with your code and a <code>kiln.toml</code>. Open one with File ▸ Open Workspace… (
            {mod}+O) or pick a recent one under File ▸ Open Recent. Kiln keeps its sessions in <code>.kiln/</code>{" "}
            inside it.
          </p>
        ) : (
          <p data-testid="help-workspaces">
            A workspace is a folder with your code and a <code>kiln.toml</code>, on the machine that runs{" "}
            <code>kiln serve</code>. The server opens the one it was started with (
            <code>kiln serve --workspace DIR</code>); on a loopback server, Switch workspace in the header opens another
            by its path. A self-hosted server serves only its own. Kiln keeps its sessions in <code>.kiln/</code> inside
            the workspace.
          </p>
        )}
        <h2>Sessions</h2>
        <p>
          A session is a change you chat with a coding agent. It works in its own working copy with checkpoints, runs
          your project's gates (typecheck, tests, format), shows the diff and a live preview, and is delivered as code:
          into the workspace or as a pull request.
        </p>
        <h2>Agents</h2>
        <p>
          Claude Code, Codex, or any OpenAI-compatible endpoint. Set paths, endpoints and keys in{" "}
          <a href={paths.settings}>Settings</a>
          {desktop ? ` (File ▸ Settings…, ${mod}+,)` : " (the button in the header)"}.
        </p>
        <h2>Keyboard</h2>
        <p>
          In the composer, Enter sends and Shift+Enter starts a new line (Settings can make {mod}+Enter send instead).
          Elsewhere, N starts a new session, 1–5 switch between Chat, Changes, Gates, Preview and Terminal, J and K step
          through the changed files, / goes to the composer and {mod}+. stops the running turn. Press <kbd>?</kbd>{" "}
          anywhere for the full list.
        </p>
        <h2>Notifications</h2>
        <p>
          {desktop
            ? "The window title shows when a session runs, needs you or failed."
            : "The tab's title and icon show when a session runs, needs you or failed. Turn on Notify me in the header to get a browser notification when a turn ends, waits for you or fails while you look elsewhere; the browser asks for permission once."}
        </p>
        <h2>Updates</h2>
        {desktop ? (
          <p data-testid="help-updates">
            Kiln looks for a signed update when it starts and from Help ▸ Check for Updates…. An update is installed
            only when its signature matches Kiln's release key. Set <code>KILN_NO_UPDATE_CHECK=1</code> to skip the
            check at start.
          </p>
        ) : (
          <p data-testid="help-updates">
            This page is served by <code>kiln serve</code>: it updates when the <code>kiln</code> on the server is
            updated and restarted.
          </p>
        )}
      </div>
      <p>
        <a className="btn" href={paths.dashboard}>
          Back to sessions
        </a>
      </p>
    </section>
  );
}

// The session's Terminal tab: its terminals (running and recently exited) to switch among, each with Stop; New terminal, and Open claude / codex here where the engine offers them; the chosen one on screen. Leaving the tab detaches; the terminals run on.
import { useCallback, useState } from "react";
import type { KilnError } from "../../api/backend";
import type { TerminalKind } from "../../api/types";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { shownTerminal, terminalLabels, terminalStateLabel } from "../../lib/terminalList";
import { useTerminals } from "../../state/terminals";
import { useApp } from "../../state/useApp";
import { TerminalPane } from "./TerminalPane";

/** The terminal last shown per session, so coming back to the tab shows it again. */
const lastShown = new Map<string, string>();

const AGENTS: { kind: TerminalKind; label: string; title: string }[] = [
  {
    kind: "claude",
    label: "Open claude here",
    title: "Claude Code's own CLI in the working copy, resuming this session's conversation",
  },
  {
    kind: "codex",
    label: "Open codex here",
    title: "Codex's own CLI in the working copy, resuming this session's conversation",
  },
];

export interface TerminalPanelProps {
  sessionId: string;
  /** The session takes new terminals (not archived, rejected or delivered). */
  open: boolean;
}

export function TerminalPanel({ sessionId, open }: TerminalPanelProps) {
  const app = useApp();
  const offered = app?.terminals === true;
  const handle = useTerminals(sessionId, offered);
  const [chosen, setChosen] = useState<string | undefined>(() => lastShown.get(sessionId));
  const [paneError, setPaneError] = useState<KilnError | null>(null);
  const choose = useCallback(
    (id: string) => {
      lastShown.set(sessionId, id);
      setChosen(id);
      setPaneError(null);
    },
    [sessionId],
  );
  const shown = shownTerminal(handle.terminals, chosen);
  const labels = terminalLabels(handle.terminals);

  const openKind = async (kind: TerminalKind) => {
    setPaneError(null);
    // The new one starts at the size the shown one has: the pane it takes over.
    const view = await handle.open(kind, shown ? { cols: shown.cols, rows: shown.rows } : undefined);
    if (view) choose(view.id);
  };

  if (!app) return <Loading label="Loading…" />;
  if (!offered) {
    return (
      <div className="terminal-panel" data-testid="terminal-panel">
        <EmptyState title="Terminals are off">
          <p>
            This Kiln server was started without <code>--allow-terminals</code>, so it opens no shells. Start it with{" "}
            <code>kiln serve --allow-terminals</code> to open a terminal in a session's working copy.
          </p>
        </EmptyState>
      </div>
    );
  }

  const actions = open && (
    <div className="terminal-actions">
      <button
        type="button"
        className="btn btn-small"
        onClick={() => void openKind("shell")}
        disabled={handle.opening !== null}
        data-testid="new-terminal"
        title="A shell in the session's working copy"
      >
        New terminal
      </button>
      {app.agentTerminals &&
        AGENTS.map((a) => (
          <button
            key={a.kind}
            type="button"
            className="btn btn-small"
            onClick={() => void openKind(a.kind)}
            disabled={handle.opening !== null}
            data-testid={`open-${a.kind}`}
            title={a.title}
          >
            {a.label}
          </button>
        ))}
    </div>
  );
  const error = paneError ?? handle.error;

  return (
    <div className="terminal-panel" data-testid="terminal-panel">
      <div className="terminal-bar">
        {handle.terminals.length > 0 && (
          <ul className="terminal-list" aria-label="Terminals">
            {handle.terminals.map((t) => (
              <li key={t.id} className="terminal-item" data-state={t.state} data-testid="terminal-item">
                <button
                  type="button"
                  className="terminal-pick"
                  aria-pressed={t.id === shown?.id}
                  onClick={() => choose(t.id)}
                  title={`${labels.get(t.id)} (${terminalStateLabel(t)})`}
                  data-testid="terminal-pick"
                >
                  <span className="terminal-title">{labels.get(t.id)}</span>
                  <span className={t.state === "running" ? "badge badge-success" : "badge"}>
                    {terminalStateLabel(t)}
                  </span>
                </button>
                {t.state === "running" && (
                  <button
                    type="button"
                    className="btn btn-small btn-danger-ghost"
                    onClick={() => void handle.stop(t.id)}
                    aria-label={`Stop ${labels.get(t.id)}`}
                    title="Stop this terminal's process"
                    data-testid="terminal-stop"
                  >
                    Stop
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {actions}
      </div>
      {error && <ErrorMessage error={error} onRetry={handle.terminals.length === 0 ? handle.retry : undefined} />}
      {shown ? (
        <div className="terminal-frame">
          {shown.state === "exited" && (
            <div className="terminal-exit" data-testid="terminal-exit">
              {shown.exitCode === null
                ? "The process ended (stopped or killed by a signal)."
                : `The process exited with code ${shown.exitCode}.`}{" "}
              Its output stays readable here.
            </div>
          )}
          <TerminalPane key={shown.id} terminal={shown} onError={setPaneError} />
        </div>
      ) : handle.loading ? (
        <Loading label="Loading terminals…" />
      ) : (
        <EmptyState title="No terminals">
          <p>
            {open
              ? "Open a shell, or the agent's own CLI, in this session's working copy. A terminal keeps running when you leave this tab."
              : "This session is closed: it takes no new terminals."}
          </p>
        </EmptyState>
      )}
    </div>
  );
}

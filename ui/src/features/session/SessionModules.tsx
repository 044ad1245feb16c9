// A session's modules: id, directory, new/edit badge, the primary (first) module marked, and a button opening each one's specification.
import { useState } from "react";
import type { SessionModule, SessionView, TranscriptEntry } from "../../api/types";
import { Modal } from "../../components/Modal";
import { SpecPanel, specRefreshKey } from "../spec/SpecPanel";
import { Badge } from "../../components/StateBadge";

export interface SessionModulesProps {
  modules: SessionModule[];
  /** With the session, each module gets a "Specification" button (a SpecPanel in a modal). */
  session?: SessionView;
  entries?: TranscriptEntry[];
  /** False for a closed session: specifications are read only. */
  editable?: boolean;
}

export function SessionModules({ modules, session, entries, editable = true }: SessionModulesProps) {
  const [specOf, setSpecOf] = useState<string | null>(null);
  if (modules.length === 0) return <p className="muted small">No modules yet.</p>;
  return (
    <>
      <ul className="session-modules" data-testid="session-modules">
        {modules.map((m, i) => (
          <li key={m.id} className="session-module" data-primary={i === 0 || undefined}>
            <div className="session-module-head">
              <code className="module-id">{m.id}</code>
              <Badge tone={m.kind === "new" ? "success" : "info"}>{m.kind}</Badge>
              {i === 0 && <Badge tone="accent">primary</Badge>}
              {session && (
                <button
                  type="button"
                  className="btn btn-small session-module-spec"
                  onClick={() => setSpecOf(m.id)}
                  aria-label={`Specification of ${m.id}`}
                  data-testid="open-spec"
                >
                  Specification
                </button>
              )}
            </div>
            <code className="muted small module-dir">{m.directory}</code>
          </li>
        ))}
      </ul>
      {session && specOf && (
        <Modal
          title={`Specification of ${specOf}`}
          onClose={() => setSpecOf(null)}
          className="modal-wide"
          footer={
            <button type="button" className="btn" onClick={() => setSpecOf(null)} data-testid="close-spec">
              Close
            </button>
          }
        >
          <SpecPanel
            key={specOf}
            sessionId={session.id}
            moduleId={specOf}
            editable={editable}
            running={session.running}
            refreshKey={specRefreshKey(session, entries)}
          />
        </Modal>
      )}
    </>
  );
}

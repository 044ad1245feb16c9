// Adds a workspace module to a session (add_module), choosing from modules not yet in it.
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { ModuleInfo, SessionView } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";

export function AddModule({ session, modules }: { session: SessionView; modules: ModuleInfo[] }) {
  const { backend, dispatch } = useStore();
  const available = modules.filter((m) => !session.modules.some((s) => s.id === m.id));
  const [moduleId, setModuleId] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  if (available.length === 0) return null;
  const selected = available.some((m) => m.id === moduleId) ? moduleId : available[0].id;
  const running = session.running || session.setup === "running";

  async function add() {
    setBusy(true);
    setError(null);
    try {
      const updated = await backend.call("add_module", { sessionId: session.id, moduleId: selected });
      dispatch({ type: "sessionUpserted", session: updated });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="add-module">
      <label className="field-label" htmlFor="add-module-select">
        Add a module
      </label>
      <div className="row">
        <select id="add-module-select" value={selected} onChange={(e) => setModuleId(e.target.value)} disabled={busy}>
          {available.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="btn btn-small"
          onClick={() => void add()}
          disabled={busy || running}
          title={running ? "Wait until the session stops running" : undefined}
          data-testid="add-module"
        >
          {busy ? "Adding…" : "Add"}
        </button>
      </div>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}

// A session's modules: id, directory, new/edit badge, the primary (first) module marked.
import type { SessionModule } from "../api/types";
import { Badge } from "./StateBadge";

export function SessionModules({ modules }: { modules: SessionModule[] }) {
  if (modules.length === 0) return <p className="muted small">No modules yet.</p>;
  return (
    <ul className="session-modules" data-testid="session-modules">
      {modules.map((m, i) => (
        <li key={m.id} className="session-module" data-primary={i === 0 || undefined}>
          <div className="session-module-head">
            <code className="module-id">{m.id}</code>
            <Badge tone={m.kind === "new" ? "success" : "info"}>{m.kind}</Badge>
            {i === 0 && <Badge tone="accent">primary</Badge>}
          </div>
          <code className="muted small module-dir">{m.directory}</code>
        </li>
      ))}
    </ul>
  );
}

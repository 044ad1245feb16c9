// The workspace's modules as chips (id and toolchain).
import type { ModuleInfo } from "../api/types";

export function ModuleChips({ modules }: { modules: ModuleInfo[] }) {
  if (modules.length === 0) return <p className="muted small">No modules found in this workspace.</p>;
  return (
    <ul className="chips" aria-label="Modules" data-testid="module-chips">
      {modules.map((m) => (
        <li key={m.id} className="chip" title={m.directory}>
          <code>{m.id}</code>
          <span className={`toolchain toolchain-${m.toolchain}`}>{m.toolchain}</span>
        </li>
      ))}
    </ul>
  );
}

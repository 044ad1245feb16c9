// The delivery plan: per module the files that land (added, overwritten), the files deleted, new packages and whether it must be enabled
// (in the direct workflow also the repository root's files and any changed module not in the session); then the gates that run first,
// the steps, the branch and the restart note.
import type { DeliveryPlan, PlannedModule } from "../../api/types";
import { OUTSIDE_MODULES_LABEL } from "../../lib/diff";

function FileList({ label, files, kind }: { label: string; files: string[]; kind: string }) {
  if (files.length === 0) return null;
  return (
    <div className="plan-files" data-testid={`plan-${kind}`}>
      <span className="plan-files-label">
        {label} <span className="muted">({files.length})</span>
      </span>
      <ul>
        {files.map((f) => (
          <li key={f}>
            <code>{f}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

function PlannedModuleCard({ module }: { module: PlannedModule }) {
  const nothing = module.added.length + module.overwritten.length + module.deleted.length === 0;
  return (
    <li className="card plan-module" data-testid="plan-module" data-module={module.moduleId} data-group={module.group}>
      <div className="plan-module-head">
        {module.group === "outside" ? (
          <span className="module-id" data-testid="plan-module-label">
            {OUTSIDE_MODULES_LABEL}
          </span>
        ) : (
          <>
            <code className="module-id" data-testid="plan-module-label">
              {module.moduleId}
            </code>
            <span className="muted small">{module.directory}</span>
            <span className="badge badge-neutral">{module.kind}</span>
          </>
        )}
        {module.group === "other-module" && (
          <span className="badge badge-warn" data-testid="plan-not-in-session">
            not in the session
          </span>
        )}
        {module.enable && (
          <span className="badge badge-info" data-testid="plan-enable">
            enable needed
          </span>
        )}
      </div>
      <FileList label="Added" files={module.added} kind="added" />
      <FileList label="Overwritten" files={module.overwritten} kind="overwritten" />
      <FileList label="Deleted" files={module.deleted} kind="deleted" />
      <FileList label="New packages" files={module.newPackages} kind="packages" />
      {nothing && <p className="muted small">No file changes.</p>}
    </li>
  );
}

export function DeliveryPlanView({ plan }: { plan: DeliveryPlan }) {
  return (
    <div className="delivery-plan" data-testid="delivery-plan">
      <h2 className="section-title">Modules</h2>
      <ul className="plan-modules">
        {plan.modules.map((m) => (
          <PlannedModuleCard key={m.moduleId} module={m} />
        ))}
      </ul>
      <h2 className="section-title">Gates that run first</h2>
      {plan.gates.length === 0 ? (
        <p className="muted small">No gates.</p>
      ) : (
        <ul className="plan-gates" data-testid="plan-gates">
          {plan.gates.map((g) => (
            <li key={g}>
              <code>{g}</code>
            </li>
          ))}
        </ul>
      )}
      <h2 className="section-title">Steps</h2>
      <ol className="plan-steps" data-testid="plan-steps">
        {plan.steps.map((s, i) => (
          <li key={`${i}:${s}`}>{s}</li>
        ))}
      </ol>
      {plan.branch && (
        <p className="small">
          Branch: <code data-testid="plan-branch">{plan.branch}</code>
        </p>
      )}
      <p className={plan.restartNeeded ? "warn-text small" : "muted small"} data-testid="plan-restart">
        {plan.restartNeeded ? "The running application must restart to pick the change up." : "No restart needed."}
      </p>
    </div>
  );
}

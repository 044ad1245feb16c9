// The set-up screen's collapsible "Environment for commands": the variables the commands Kiln runs get from the user's environment, by source, and the tool configuration files they read from a copy.
import type { PassedVariable } from "../../api/types";
import { Icon } from "../../components/Icon";

const plural = (n: number, noun: string) => `${n === 0 ? "no" : n} ${noun}${n === 1 ? "" : "s"}`;

/** "4 variables, 1 file": the files only when there are some. */
export function environmentCount(environment: PassedVariable[], configFiles: string[]): string {
  const variables = plural(environment.length, "variable");
  return configFiles.length > 0 ? `${variables}, ${plural(configFiles.length, "file")}` : variables;
}

/** The variables by source, the sources in the order they first appear, each keeping the engine's order. */
function bySource(environment: PassedVariable[]): [string, PassedVariable[]][] {
  const groups = new Map<string, PassedVariable[]>();
  for (const v of environment) {
    const group = groups.get(v.source);
    if (group) group.push(v);
    else groups.set(v.source, [v]);
  }
  return [...groups.entries()];
}

interface SetupEnvironmentProps {
  environment: PassedVariable[];
  configFiles: string[];
}

export function SetupEnvironment({ environment, configFiles }: SetupEnvironmentProps) {
  return (
    <details className="setup-env" data-testid="setup-environment">
      <summary className="setup-env-summary" data-testid="setup-environment-summary">
        <Icon name="chevron" size={12} className="setup-env-toggle" />
        <h2 className="section-title setup-env-title">
          Environment for commands{" "}
          <span className="setup-env-count small" data-testid="setup-environment-count">
            · {environmentCount(environment, configFiles)}
          </span>
        </h2>
      </summary>
      <div className="card setup-env-body">
        <p className="muted small setup-env-note">
          Setup, gates, the preview and terminals get these from your environment; names that look secret never pass
          unless <code>kiln.toml</code>'s <code>[environment] pass</code> names them.
        </p>
        {environment.length === 0 ? (
          <p className="muted small setup-env-none">No variable of your environment passes to them.</p>
        ) : (
          bySource(environment).map(([source, variables]) => (
            <section key={source} className="setup-env-group" data-testid="setup-env-group" data-source={source}>
              <h3 className="setup-env-source">From {source}</h3>
              <ul className="setup-env-list">
                {variables.map((v) => (
                  <VariableLine key={v.name} variable={v} />
                ))}
              </ul>
            </section>
          ))
        )}
        {configFiles.length > 0 && (
          <section className="setup-env-group" data-testid="setup-env-files">
            <h3 className="setup-env-source">Tool configuration</h3>
            <ul className="setup-env-list">
              {configFiles.map((f) => (
                <li key={f} className="setup-env-var" data-testid="setup-env-file">
                  <code className="setup-env-name">{f}</code>{" "}
                  <span className="muted small">read from a copy, never written</span>
                </li>
              ))}
            </ul>
          </section>
        )}
      </div>
    </details>
  );
}

function VariableLine({ variable }: { variable: PassedVariable }) {
  const { name, value } = variable;
  return (
    <li className="setup-env-var" data-testid="setup-env-var" data-name={name}>
      <code className="setup-env-name">{name}</code> <span className="setup-env-eq muted">=</span>{" "}
      {value === null ? (
        <span
          className="setup-env-hidden muted"
          title="Kept from view: a secret-looking name, or a URL with a password"
        >
          (hidden)
        </span>
      ) : (
        <span className="setup-env-value mono" title={value}>
          {value === "" ? '""' : value}
        </span>
      )}
    </li>
  );
}

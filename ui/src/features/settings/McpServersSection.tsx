// The Settings screen's MCP servers: every server agents are given (kiln.toml's, shared with the repository, and the user's own, values sealed), a check that starts each as an agent would and lists its tools, and a form to add one (a command or an address) or remove one of the user's.
import { type FormEvent, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { McpServerCheck, McpServerView, NamedValue, SettingsView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { InlineCode } from "../../components/InlineCode";
import { Badge } from "../../components/StateBadge";
import { TextField } from "../../components/TextField";
import { useStore } from "../../state/store";

export interface McpServersSectionProps {
  view: SettingsView;
  /** Settings as save or remove answered them. */
  onChanged: (next: SettingsView) => void;
  /** The server takes no MCP servers from its users (self-hosted). */
  readOnly: boolean;
}

/** `NAME=value` lines into pairs; a line without `=` is an error naming it. */
export function parsePairs(text: string, what: string): NamedValue[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.indexOf("=");
      if (at <= 0) throw new Error(`${what} lines are NAME=value: “${line.slice(0, 40)}” has no name`);
      return { name: line.slice(0, at).trim(), value: line.slice(at + 1) };
    });
}

function describe(server: McpServerView): string {
  if (server.url) return server.url;
  return [server.command ?? "", ...server.args].join(" ");
}

export function McpServersSection({ view, onChanged, readOnly }: McpServersSectionProps) {
  const { backend } = useStore();
  const servers = view.mcpServers ?? [];
  const [checks, setChecks] = useState<McpServerCheck[] | null>(null);
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  async function check() {
    setChecking(true);
    setError(null);
    try {
      setChecks(await backend.call("check_mcp_servers", {}));
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setChecking(false);
    }
  }

  async function remove(name: string) {
    setError(null);
    try {
      onChanged(await backend.call("remove_mcp_server", { name }));
      setChecks(null);
    } catch (e) {
      setError(toKilnError(e));
    }
  }

  return (
    <div className="card form mcp-servers" data-testid="mcp-servers">
      <h2 className="section-title mcp-title">MCP servers</h2>
      <p className="hint">
        Tool servers every agent gets: Claude Code, Codex and the ACP agents. Shared ones come from{" "}
        <InlineCode text="kiln.toml" /> (<InlineCode text="[mcp.<name>]" />
        ); yours are kept here, their values sealed.
      </p>
      {servers.length === 0 ? (
        <p className="muted" data-testid="mcp-none">
          No MCP servers yet.
        </p>
      ) : (
        <ul className="driver-list" data-testid="mcp-list">
          {servers.map((server) => {
            const result = server.overridden ? undefined : checks?.find((c) => c.name === server.name);
            return (
              <li key={`${server.source}:${server.name}`} className="driver-item" data-mcp={server.name}>
                <strong>{server.name}</strong>
                <Badge tone={server.source === "settings" ? "info" : "muted"} testId="mcp-source">
                  {server.source === "settings" ? "yours" : "kiln.toml"}
                </Badge>
                <code className="small mcp-command">{describe(server)}</code>
                {server.source === "settings" && !readOnly && (
                  <button
                    type="button"
                    className="btn btn-small btn-danger-ghost"
                    onClick={() => void remove(server.name)}
                  >
                    Remove
                  </button>
                )}
                {server.overridden && <span className="muted small mcp-line">replaced by yours</span>}
                {[...server.envNames, ...server.headerNames].length > 0 && (
                  <span className="muted small mcp-line">
                    with {[...server.envNames, ...server.headerNames].join(", ")}
                  </span>
                )}
                {result && (
                  <span className="small mcp-line" data-testid="mcp-check">
                    {result.started && !result.error ? (
                      <Badge tone="success">
                        {`answered · ${result.tools.length} tool${result.tools.length === 1 ? "" : "s"}`}
                      </Badge>
                    ) : (
                      <Badge tone="danger">failed</Badge>
                    )}{" "}
                    {result.error ?? result.tools.join(", ")}
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {servers.length > 0 && (
        <button
          type="button"
          className="btn"
          disabled={checking}
          onClick={() => void check()}
          data-testid="mcp-check-all"
        >
          {checking ? "Checking…" : "Check servers"}
        </button>
      )}
      {error && <ErrorMessage error={error} />}
      {readOnly ? (
        <p className="hint">
          This server takes MCP servers from kiln.toml only: a command added here would run on the host.
        </p>
      ) : (
        <AddServerForm onChanged={onChanged} />
      )}
    </div>
  );
}

function AddServerForm({ onChanged }: { onChanged: (next: SettingsView) => void }) {
  const { backend } = useStore();
  const [kind, setKind] = useState<"command" | "url">("command");
  const [name, setName] = useState("");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [url, setUrl] = useState("");
  const [values, setValues] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  async function add(e: FormEvent) {
    e.preventDefault();
    setError(null);
    let pairs: NamedValue[];
    try {
      pairs = parsePairs(values, kind === "command" ? "Variable" : "Header");
    } catch (err) {
      setError(toKilnError(err));
      return;
    }
    setBusy(true);
    try {
      const lines = args
        .split("\n")
        .map((a) => a.trim())
        .filter(Boolean);
      const next = await backend.call(
        "save_mcp_server",
        kind === "command" ? { name, command, args: lines, env: pairs } : { name, url, headers: pairs },
      );
      onChanged(next);
      setName("");
      setCommand("");
      setArgs("");
      setUrl("");
      setValues("");
    } catch (err) {
      setError(toKilnError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={add} data-testid="mcp-add">
      <h3 className="section-title">Add a server of yours</h3>
      <TextField
        id="mcp-name"
        label="Name"
        value={name}
        onChange={setName}
        placeholder="docs"
        hint="Agents see its tools as mcp__<name>__<tool>."
      />
      <label className="field-label" htmlFor="mcp-kind">
        Reached by
      </label>
      <select
        id="mcp-kind"
        className="input"
        value={kind}
        onChange={(e) => setKind(e.target.value as "command" | "url")}
        data-testid="mcp-kind"
      >
        <option value="command">a command agents start (stdio)</option>
        <option value="url">an address (HTTP)</option>
      </select>
      {kind === "command" ? (
        <>
          <TextField id="mcp-command" label="Command" value={command} onChange={setCommand} placeholder="npx" />
          <label className="field-label" htmlFor="mcp-args">
            Arguments, one per line
          </label>
          <textarea
            id="mcp-args"
            className="input"
            rows={2}
            value={args}
            onChange={(e) => setArgs(e.target.value)}
            data-testid="mcp-args"
          />
        </>
      ) : (
        <TextField
          id="mcp-url"
          label="Address"
          value={url}
          onChange={setUrl}
          placeholder="https://mcp.example.com/mcp"
        />
      )}
      <label className="field-label" htmlFor="mcp-values">
        {kind === "command" ? "Variables" : "Headers"}, NAME=value one per line (sealed; only names are shown again)
      </label>
      <textarea
        id="mcp-values"
        className="input"
        rows={2}
        value={values}
        onChange={(e) => setValues(e.target.value)}
        autoComplete="off"
        spellCheck={false}
        data-testid="mcp-values"
      />
      {error && <ErrorMessage error={error} />}
      <button type="submit" className="btn btn-primary" disabled={busy || !name.trim()} data-testid="mcp-save">
        {busy ? "Adding…" : "Add server"}
      </button>
    </form>
  );
}

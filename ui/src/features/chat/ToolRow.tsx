// One tool call as one chat row: kind icon, target, +/− counts, status (how long a running one has run); expands to its output and, for an edit, its diff; a running command shows what it prints as it prints it.
import { useEffect, useState } from "react";
import { Icon, type IconName } from "../../components/Icon";
import type { ToolKind, ToolRow as ToolRowModel } from "../../lib/transcript";
import { useRunningOutput } from "./runningOutput";

/** The icon of each tool kind (a permission card shows its request's too). */
export const KIND_ICON: Record<ToolKind, IconName> = {
  read: "file",
  edit: "edit",
  execute: "terminal",
  search: "search",
  fetch: "globe",
  think: "think",
  other: "tool",
};

const KIND_LABEL: Record<ToolKind, string> = {
  read: "Read",
  edit: "Edit",
  execute: "Run",
  search: "Search",
  fetch: "Fetch",
  think: "Plan",
  other: "Tool",
};

/** A unified diff, each line coloured by what it does. */
function DiffBlock({ diff }: { diff: string }) {
  return (
    <pre className="tool-diff" data-testid="tool-diff">
      {diff.split("\n").map((line, i) => {
        const cls = line.startsWith("@@")
          ? "hunk"
          : line.startsWith("+") && !line.startsWith("+++")
            ? "add"
            : line.startsWith("-") && !line.startsWith("---")
              ? "del"
              : "ctx";
        return (
          <span key={i} className={`diff-line diff-${cls}`}>
            {line}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}

/** Lines of a running command's output shown under its row: its end. */
const LIVE_LINES = 12;

/** "12 s", "3 min 4 s": how long a step has run. */
export function runningFor(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** Milliseconds since `since` (an ISO time) while `running`, ticking every second; null otherwise. */
function useRunningSince(since: string, running: boolean): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  const start = Date.parse(since);
  return running && Number.isFinite(start) ? now - start : null;
}

export function ToolRowView({ row }: { row: ToolRowModel }) {
  const [open, setOpen] = useState(false);
  const running = row.status === "running";
  const streamed = useRunningOutput(row.key);
  const ranFor = useRunningSince(row.entries[0]?.createdAt ?? "", running);
  const tail = streamed ? streamed.replace(/\s+$/, "").split("\n").slice(-LIVE_LINES).join("\n") : null;
  const hasMore = Boolean(row.output) || row.changes.length > 0 || row.putBack.length > 0;
  const changed = row.changes.map((c) => c.path).filter((p) => p !== row.target);
  return (
    <article
      className={`entry entry-tool chat-tool tool-${row.status}${row.putBack.length ? " tool-put-back" : ""}`}
      data-testid="entry"
      data-kind="tool"
      data-row="tool"
      data-tool-kind={row.kind}
      data-status={row.status}
      data-role={row.role ?? undefined}
    >
      <button
        type="button"
        className="tool-toggle"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        disabled={!hasMore}
        data-testid="tool-toggle"
      >
        <span className="tool-caret" aria-hidden="true">
          {hasMore ? (open ? "▾" : "▸") : ""}
        </span>
        <Icon name={KIND_ICON[row.kind]} className="entry-icon" />
        <span className="tool-kind">{KIND_LABEL[row.kind]}</span>
        <code className="tool-target" title={row.target}>
          {row.target}
        </code>
        {changed.length > 0 && (
          <span className="tool-more muted">
            +{changed.length} file{changed.length > 1 ? "s" : ""}
          </span>
        )}
        {row.added !== null && (
          <span className="tool-counts" data-testid="tool-counts">
            <span className="count-add">+{row.added}</span> <span className="count-del">−{row.removed}</span>
          </span>
        )}
        {row.putBack.length > 0 && (
          <span className="tool-warning" data-testid="tool-put-back" title={`Put back: ${row.putBack.join(", ")}`}>
            <Icon name="alert" size={13} /> put back
          </span>
        )}
        <span className="tool-status" aria-label={row.status}>
          {running ? (
            <span className="tool-running" data-testid="tool-running">
              running{ranFor !== null && ranFor >= 1000 ? ` · ${runningFor(ranFor)}` : "…"}
            </span>
          ) : row.status === "failed" ? (
            <span className="tool-fail">failed</span>
          ) : row.status === "ended" ? (
            <span className="muted" title="The turn ended before this step reported a result">
              no result
            </span>
          ) : null}
        </span>
      </button>
      {running && tail && (
        <pre className="tool-output tool-output-live" data-testid="tool-live-output" aria-live="off">
          <code>{tail}</code>
        </pre>
      )}
      {open && (
        <div className="tool-body" data-testid="tool-body">
          {row.putBack.length > 0 && (
            <p className="tool-put-back-note">
              Kiln put back {row.putBack.length === 1 ? "this edit" : "these edits"}: outside what this role may change
              (
              {row.putBack.map((p, i) => (
                <span key={p}>
                  {i > 0 && ", "}
                  <code>{p}</code>
                </span>
              ))}
              ).
            </p>
          )}
          {row.changes.length > 0 && (
            <ul className="tool-changes">
              {row.changes.map((c) => (
                <li key={`${c.change}:${c.path}`}>
                  <span className="muted">{c.change}</span> <code>{c.path}</code>
                </li>
              ))}
            </ul>
          )}
          {row.diff ? (
            <DiffBlock diff={row.diff} />
          ) : row.output ? (
            <pre className="tool-output">
              <code>{row.output}</code>
            </pre>
          ) : null}
        </div>
      )}
    </article>
  );
}

// One transcript entry, drawn by kind (user bubbles, agent markdown, tool lines, handoff blocks, system notes, gate cards): the compact rows open to these.
import { memo, type ReactNode, useState } from "react";
import type { TranscriptEntry } from "../../api/types";
import { roleName } from "../../lib/roles";
import { gateOutcome, parseHandoff } from "../../lib/transcript";
import { Icon, type IconName } from "../../components/Icon";
import { Md } from "../../components/Markdown";
import { RelativeTime } from "../../components/RelativeTime";
import { PointedChips } from "./PointedChips";
import { ModuleId } from "../../lib/moduleWords";

// The parsers live in lib/transcript.ts (the folding uses them too); re-exported for the entry views' callers.
export { gateOutcome, parseHandoff, type Handoff } from "../../lib/transcript";

export interface ToolParts {
  summary: string;
  body: string;
  /** The body holds a fenced output block: the row starts collapsed. */
  fenced: boolean;
  status: "done" | "failed" | null;
}

/** Splits a tool entry into its first line (the summary) and the rest. */
export function toolParts(text: string): ToolParts {
  const trimmed = text.replace(/^\s*\n/, "");
  const nl = trimmed.indexOf("\n");
  const summary = (nl < 0 ? trimmed : trimmed.slice(0, nl)).trim();
  const body = nl < 0 ? "" : trimmed.slice(nl + 1).trim();
  const status = /^↳\s*failed\b/i.test(summary) ? "failed" : /^↳\s*done\b/i.test(summary) ? "done" : null;
  return { summary, body, fenced: /^\s*(```|~~~)/m.test(body), status };
}

/** The small header over a run of one role's agent and tool entries. */
export function RoleHead({ entry, children }: { entry: TranscriptEntry; children?: ReactNode }) {
  return (
    <div className="role-head" data-testid="role-head">
      <Icon name="agent" className="entry-icon" />
      <span className="entry-who">{entry.role ? roleName(entry.role) : "Agent"}</span>
      <ModuleId id={entry.module} />
      {children}
      <span className="entry-time">
        <RelativeTime value={entry.createdAt} />
      </span>
    </div>
  );
}

function Shell({
  entry,
  className,
  children,
  extra,
}: {
  entry: TranscriptEntry;
  className: string;
  children: ReactNode;
  extra?: Record<string, string | undefined>;
}) {
  return (
    <article
      className={`entry entry-${entry.kind} ${className}`.trim()}
      data-testid="entry"
      data-kind={entry.kind}
      {...extra}
    >
      {children}
    </article>
  );
}

function UserEntry({ entry }: { entry: TranscriptEntry }) {
  return (
    <Shell entry={entry} className="">
      <div className="bubble">{entry.text}</div>
      {entry.context && <PointedChips sessionId={entry.sessionId} items={entry.context} />}
      <div className="bubble-meta">
        {entry.role && <span>to {roleName(entry.role)}</span>}
        <ModuleId id={entry.module} />
        <RelativeTime value={entry.createdAt} />
      </div>
    </Shell>
  );
}

function AgentEntry({ entry }: { entry: TranscriptEntry }) {
  return (
    <Shell entry={entry} className="" extra={{ "data-role": entry.role ?? undefined }}>
      <div className="entry-body markdown">
        <Md text={entry.text} />
      </div>
    </Shell>
  );
}

function ToolEntry({ entry }: { entry: TranscriptEntry }) {
  const parts = toolParts(entry.text);
  const [open, setOpen] = useState(!parts.fenced);
  const status = parts.status ? ` tool-${parts.status}` : "";
  const summary = (
    <span className="tool-summary">
      <Md text={parts.summary || "(tool)"} inline />
    </span>
  );
  return (
    <Shell entry={entry} className={`tool-row${status}`} extra={{ "data-role": entry.role ?? undefined }}>
      {parts.body ? (
        <button
          type="button"
          className="tool-toggle"
          aria-expanded={open}
          onClick={() => setOpen((o) => !o)}
          data-testid="tool-toggle"
        >
          <span className="tool-caret" aria-hidden="true">
            {open ? "▾" : "▸"}
          </span>
          <Icon name="tool" className="entry-icon" />
          {summary}
        </button>
      ) : (
        <div className="tool-line">
          <Icon name="tool" className="entry-icon" />
          {summary}
        </div>
      )}
      {parts.body && open && (
        <div className="tool-body markdown" data-testid="tool-body">
          <Md text={parts.body} />
        </div>
      )}
    </Shell>
  );
}

function HandoffEntry({ entry }: { entry: TranscriptEntry }) {
  const h = parseHandoff(entry.text);
  return (
    <Shell entry={entry} className={h.blocked ? "entry-handoff-blocked" : ""}>
      <header className="entry-head">
        <Icon name={h.blocked ? "alert" : "handoff"} className="entry-icon" />
        {h.from && h.to ? (
          <span className="handoff-route">
            <span className="handoff-from" data-testid="handoff-from">
              {roleName(h.from)}
            </span>
            <span aria-label="to"> → </span>
            <span className="handoff-to" data-testid="handoff-to">
              {roleName(h.to)}
            </span>
          </span>
        ) : (
          <span className="entry-who">{h.title}</span>
        )}
        <ModuleId id={entry.module} />
        <span className="entry-time">
          <RelativeTime value={entry.createdAt} />
        </span>
      </header>
      {h.reason && (
        <div className="entry-body markdown">
          <Md text={h.reason} />
        </div>
      )}
    </Shell>
  );
}

function SystemEntry({ entry }: { entry: TranscriptEntry }) {
  return (
    <Shell entry={entry} className="">
      <Icon name="info" className="entry-icon" />
      <div className="entry-body markdown">
        <Md text={entry.text} />
      </div>
      <span className="entry-time">
        <RelativeTime value={entry.createdAt} />
      </span>
    </Shell>
  );
}

const OUTCOME_LABEL = {
  pass: "passed",
  fail: "failed",
  "failing-before": "failing before",
  skipped: "skipped",
  "not-run": "not run",
  "not-configured": "not configured",
} as const;
const OUTCOME_ICON: Record<keyof typeof OUTCOME_LABEL | "unknown", IconName> = {
  pass: "check",
  fail: "cross",
  "failing-before": "alert",
  skipped: "skip",
  "not-run": "skip",
  "not-configured": "dash",
  unknown: "gate",
};

function GateEntry({ entry }: { entry: TranscriptEntry }) {
  const outcome = gateOutcome(entry.text);
  const iconName = OUTCOME_ICON[outcome];
  return (
    <Shell entry={entry} className={`entry-gate-${outcome}`} extra={{ "data-outcome": outcome }}>
      <header className="entry-head">
        <Icon name={iconName} className="entry-icon" />
        <span className="entry-who">Gate</span>
        {outcome !== "unknown" && <span className="entry-outcome">{OUTCOME_LABEL[outcome]}</span>}
        <ModuleId id={entry.module} />
        {entry.role && <span className="muted small">{roleName(entry.role)}</span>}
        <span className="entry-time">
          <RelativeTime value={entry.createdAt} />
        </span>
      </header>
      <div className="entry-body markdown">
        <Md text={entry.text} />
      </div>
    </Shell>
  );
}

function Body({ entry }: { entry: TranscriptEntry }) {
  switch (entry.kind) {
    case "user":
      return <UserEntry entry={entry} />;
    case "agent":
      return <AgentEntry entry={entry} />;
    case "tool":
      return <ToolEntry entry={entry} />;
    case "handoff":
      return <HandoffEntry entry={entry} />;
    case "gate":
      return <GateEntry entry={entry} />;
    default:
      return <SystemEntry entry={entry} />;
  }
}

export interface EntryViewProps {
  entry: TranscriptEntry;
  /** The entry starts a run of one role's agent/tool entries: draw the role header over it. */
  roleHead?: boolean;
}

function EntryViewInner({ entry, roleHead }: EntryViewProps) {
  return (
    <>
      {roleHead && <RoleHead entry={entry} />}
      <Body entry={entry} />
    </>
  );
}

export const EntryView = memo(EntryViewInner);

/** Agent and tool entries are grouped by role; this says whether entries[i] starts a group. */
export function startsRoleGroup(entries: TranscriptEntry[], i: number): boolean {
  const e = entries[i];
  if (e.kind !== "agent" && e.kind !== "tool") return false;
  const prev = i > 0 ? entries[i - 1] : undefined;
  if (!prev || (prev.kind !== "agent" && prev.kind !== "tool")) return true;
  return prev.role !== e.role || prev.module !== e.module;
}

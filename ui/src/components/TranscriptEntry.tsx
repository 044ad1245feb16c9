// One transcript entry: who/what said it, when, and its text rendered as markdown.
import { memo } from "react";
import Markdown, { type Components } from "react-markdown";
import type { EntryKind, TranscriptEntry } from "../api/types";
import { Icon, type IconName } from "./Icon";
import { RelativeTime } from "./RelativeTime";

const LABEL: Record<EntryKind, string> = {
  user: "You",
  agent: "Agent",
  system: "System",
  tool: "Tool",
  gate: "Gate",
  handoff: "Handoff",
};

const ICON: Record<EntryKind, IconName> = {
  user: "user",
  agent: "agent",
  system: "info",
  tool: "tool",
  gate: "gate",
  handoff: "handoff",
};

/** A gate entry's outcome, read from its text (the contract has no explicit field). */
export function gateOutcome(text: string): "pass" | "fail" | "unknown" {
  const t = text.replace(/\b0\s+(failed|failures?|errors?)\b/gi, "");
  if (/\b(fail(ed|s|ures?)?|errors?)\b/i.test(t) || /[✗❌]/.test(t)) return "fail";
  if (/\b(pass(ed|es)?|ok|succeeded)\b/i.test(t) || /[✓✔✅]/.test(t)) return "pass";
  return "unknown";
}

const markdownComponents: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
};

function EntryViewInner({ entry }: { entry: TranscriptEntry }) {
  const outcome = entry.kind === "gate" ? gateOutcome(entry.text) : undefined;
  const iconName: IconName = outcome === "pass" ? "check" : outcome === "fail" ? "cross" : ICON[entry.kind] ?? "info";
  const label = entry.kind === "agent" && entry.role ? entry.role : LABEL[entry.kind] ?? entry.kind;
  const className = ["entry", `entry-${entry.kind}`, outcome ? `entry-gate-${outcome}` : ""].filter(Boolean).join(" ");
  return (
    <article className={className} data-testid="entry" data-kind={entry.kind} data-outcome={outcome}>
      <header className="entry-head">
        <Icon name={iconName} className="entry-icon" />
        <span className="entry-who">{label}</span>
        {outcome && outcome !== "unknown" && <span className="entry-outcome">{outcome === "pass" ? "passed" : "failed"}</span>}
        {entry.module && <code className="module-id">{entry.module}</code>}
        {entry.role && entry.kind !== "agent" && <span className="muted small">{entry.role}</span>}
        <span className="entry-time">
          <RelativeTime value={entry.createdAt} />
        </span>
      </header>
      <div className="entry-body markdown">
        <Markdown components={markdownComponents}>{entry.text}</Markdown>
      </div>
    </article>
  );
}

export const EntryView = memo(EntryViewInner);

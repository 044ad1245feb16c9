// One row of the compact chat (lib/transcript.ts folds entries into rows): messages, tool calls, gate runs, notes, notices, errors, handoff chips.
import { memo, useState } from "react";
import type { TranscriptEntry } from "../../api/types";
import { Icon } from "../../components/Icon";
import { Md } from "../../components/Markdown";
import { RelativeTime } from "../../components/RelativeTime";
import { errorWords } from "../../lib/errorWords";
import { roleName } from "../../lib/roles";
import {
  gatesSummary,
  type ErrorRow,
  type GatesRow,
  type HandoffRow,
  type MessageRow,
  isPlannerLine,
  type NoticeRow,
  type NotesRow,
  type Row,
  type ToolRow as ToolRowModel,
} from "../../lib/transcript";
import { EntryView, RoleHead } from "./TranscriptEntry";
import { ToolRowView } from "./ToolRow";
import { ModuleId, useModuleWords } from "../../lib/moduleWords";
import { paths } from "../../router";
import { withCommandSummaries } from "../../lib/commandSummary";

/** A caret button that opens a row's folded entries. */
function Fold({
  open,
  onToggle,
  children,
  testId,
}: {
  open: boolean;
  onToggle: () => void;
  children: React.ReactNode;
  testId: string;
}) {
  return (
    <button type="button" className="fold-toggle" aria-expanded={open} onClick={onToggle} data-testid={testId}>
      <span className="tool-caret" aria-hidden="true">
        {open ? "▾" : "▸"}
      </span>
      {children}
    </button>
  );
}

/** "**Engineer** takes the turn in `greet`.": who works where, noise where the repository is one package. */
const TAKES_THE_TURN = /^\*\*[^*\n]+\*\* takes the turn in `[^`\n]*`\.?\s*$/;

function firstLine(text: string): string {
  return text.trim().split("\n")[0];
}

function NotesRowView({ row }: { row: NotesRow }) {
  const [open, setOpen] = useState(false);
  const moduleWords = useModuleWords();
  // A turn that failed before its first row leaves its lead as a note; in a one-package repository it says nothing.
  const entries = moduleWords ? row.entries : row.entries.filter((e) => !TAKES_THE_TURN.test(e.text));
  const n = entries.length;
  if (n === 0) return null;
  const latest = entries[n - 1];
  return (
    <div className="chat-notes" data-testid="entry" data-kind="system" data-row="notes">
      <Fold open={open} onToggle={() => setOpen((o) => !o)} testId="notes-toggle">
        <Icon name="info" className="entry-icon" size={13} />
        <span className="notes-count">{n === 1 ? "1 note" : `${n} notes`}</span>
        {!open && (
          <span className="notes-preview">
            <Md text={firstLine(latest.text)} inline />
          </span>
        )}
      </Fold>
      {open && <FoldedEntries entries={entries} testId="notes-body" />}
    </div>
  );
}

function NoticeRowView({ row }: { row: NoticeRow }) {
  const moduleWords = useModuleWords();
  // Which module the session works on is news only where there is a choice of modules.
  if (!moduleWords && row.entries.every((e) => isPlannerLine(e.text))) return null;
  return (
    <article
      className={`entry entry-system chat-notice notice-${row.tone}`}
      data-testid="entry"
      data-kind="system"
      data-row="notice"
    >
      <Icon name={row.tone === "warn" ? "alert" : "info"} className="entry-icon" />
      <div className="entry-body markdown">
        {row.entries.map((e) => (
          <Md key={e.id} text={e.text} />
        ))}
      </div>
      <span className="entry-time">
        <RelativeTime value={row.entry.createdAt} />
      </span>
    </article>
  );
}

/** A gate's or the setup's line with its commands by what they do (the Gates tab has them whole). */
function plainCommands(entry: TranscriptEntry): TranscriptEntry {
  const text = withCommandSummaries(entry.text);
  return text === entry.text ? entry : { ...entry, text };
}

function GatesRowView({ row }: { row: GatesRow }) {
  const [open, setOpen] = useState(false);
  const failed = row.failed.length > 0;
  // Failures there before the session alone: amber, neither a failure of the change nor a pass.
  const before = !failed && row.failingBefore > 0;
  return (
    <div
      className={`chat-gates ${failed ? "gates-failed" : before ? "gates-before" : "gates-passed"}`}
      data-testid="entry"
      data-kind="gate"
      data-row="gates"
      data-outcome={failed ? "fail" : before ? "failing-before" : "pass"}
    >
      <Fold open={open} onToggle={() => setOpen((o) => !o)} testId="gates-toggle">
        <Icon name={failed ? "cross" : before ? "alert" : "check"} className="entry-icon" size={14} />
        <span className="gates-summary" data-testid="gate-run-summary">
          {gatesSummary(row)}
        </span>
        {row.fixBy && <span className="gates-fix">→ back to {roleName(row.fixBy)}</span>}
        <ModuleId id={row.module} />
      </Fold>
      {open && <FoldedEntries entries={row.entries.map(plainCommands)} testId="gates-body" />}
    </div>
  );
}

function ErrorRowView({ row }: { row: ErrorRow }) {
  const [open, setOpen] = useState(false);
  const hasDetails = row.codes.length > 0 || row.detail || row.entries.length > 1;
  return (
    <article
      className={`entry chat-error${row.blocked ? " entry-handoff-blocked" : ""}`}
      role="alert"
      data-testid="entry"
      data-kind={row.blocked ? "handoff" : "system"}
      data-row="error"
    >
      <div className="chat-error-line">
        <Icon name="alert" className="entry-icon" />
        {row.blocked && <strong className="entry-who">Blocked</strong>}
        <span className="chat-error-text">
          <Md text={row.text} inline />
        </span>
        {row.count > 1 && (
          <span className="error-count" data-testid="error-count" title={`said ${row.count} times`}>
            ×{row.count}
          </span>
        )}
        <span className="entry-time">
          <RelativeTime value={row.entries[row.entries.length - 1].createdAt} />
        </span>
      </div>
      {/refused the credentials/.test(row.text) && (
        <p className="chat-error-fix small" data-testid="error-fix">
          <a href={paths.settings}>Open Settings</a> to check the agent's key or login; then Retry.
        </p>
      )}
      {hasDetails && (
        <Fold open={open} onToggle={() => setOpen((o) => !o)} testId="error-details-toggle">
          <span className="muted small">details</span>
        </Fold>
      )}
      {open && (
        <div className="folded-entries" data-testid="error-details">
          {row.codes.map((code) => (
            <p key={code} className="error-details-line">
              <code className="error-code">{code}</code> {errorWords(code)}
            </p>
          ))}
          {row.detail && <pre className="tool-output">{row.detail}</pre>}
          {row.entries.length > 1 && row.entries.map((e) => <EntryView key={e.id} entry={e} />)}
        </div>
      )}
    </article>
  );
}

function HandoffChip({ row }: { row: HandoffRow }) {
  const h = row.handoff;
  const review = row.review;
  return (
    <article
      className={`entry entry-handoff chat-handoff${review ? ` chat-review review-${review}` : ""}`}
      data-testid="entry"
      data-kind="handoff"
      data-row="handoff"
      data-role={row.role ?? undefined}
    >
      <Icon name={review ? (review === "pass" ? "check" : "alert") : "handoff"} className="entry-icon" />
      {review ? (
        <span className="handoff-route">
          <span className="handoff-from">Review</span>
          <span aria-label="to"> → </span>
          <span className="handoff-to" data-testid="handoff-to">
            {review}
          </span>
        </span>
      ) : h.from && h.to ? (
        <span className="handoff-route">
          <span className="handoff-from" data-testid="handoff-from">
            {/^gate\b/.test(h.from) ? <Md text={h.from} inline /> : roleName(h.from)}
          </span>
          <span aria-label="to"> → </span>
          <span className="handoff-to" data-testid="handoff-to">
            {h.to === "none" ? "you" : roleName(h.to)}
          </span>
        </span>
      ) : (
        <span className="entry-who">{h.title}</span>
      )}
      {h.reason && (
        <span className="handoff-reason">
          <Md text={h.reason} inline />
        </span>
      )}
      <ModuleId id={row.module} />
    </article>
  );
}

/** The header over a role's rows; when routing notes led to the turn, they fold into it behind a one-line toggle. */
function RowHead({ row }: { row: MessageRow | ToolRowModel }) {
  const [open, setOpen] = useState(false);
  const moduleWords = useModuleWords();
  const main = row.entries[row.lead.length] ?? row.entries[0];
  // "Engineer takes the turn in `greet`" under "Engineer" says nothing in a one-package repository.
  const lead = moduleWords ? row.lead : row.lead.filter((e) => !TAKES_THE_TURN.test(e.text));
  if (lead.length === 0) return <RoleHead entry={main} />;
  return (
    <>
      <RoleHead entry={main}>
        <button
          type="button"
          className="lead-toggle"
          aria-expanded={open}
          onClick={() => setOpen((o) => !o)}
          data-testid="lead-toggle"
        >
          <span className="tool-caret" aria-hidden="true">
            {open ? "▾" : "▸"}
          </span>
          <span className="lead-preview">
            <Md text={firstLine(lead[0].text)} inline />
          </span>
        </button>
      </RoleHead>
      {open && <FoldedEntries entries={lead} testId="lead-body" />}
    </>
  );
}

export interface RowViewProps {
  row: Row;
  /** The row starts a run of one role's agent/tool rows: draw the role header over it. */
  roleHead?: boolean;
}

function RowViewInner({ row, roleHead }: RowViewProps) {
  const head = roleHead && (row.type === "agent" || row.type === "tool") ? <RowHead row={row} /> : null;
  switch (row.type) {
    case "user":
      return <EntryView entry={row.entry} />;
    case "agent":
      return (
        <>
          {head}
          <EntryView entry={row.text === row.entry.text ? row.entry : { ...row.entry, text: row.text }} />
        </>
      );
    case "tool":
      return (
        <>
          {head}
          <ToolRowView row={row} />
        </>
      );
    case "gates":
      return <GatesRowView row={row} />;
    case "notes":
      return <NotesRowView row={row} />;
    case "notice":
      return <NoticeRowView row={row} />;
    case "error":
      return <ErrorRowView row={row} />;
    case "handoff":
      return <HandoffChip row={row} />;
  }
}

export const RowView = memo(RowViewInner);

/** The entries a folded row stands for, shown whole when it is opened. */
function FoldedEntries({ entries, testId }: { entries: TranscriptEntry[]; testId: string }) {
  return (
    <ol className="folded-entries" data-testid={testId}>
      {entries.map((e) => (
        <li key={e.id}>
          <EntryView entry={e} />
        </li>
      ))}
    </ol>
  );
}

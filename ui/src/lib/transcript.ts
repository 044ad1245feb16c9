// Folds the engine's transcript entries into the compact chat's rows: one row per tool call, one per gate run, notes behind "details", errors once, protocol lines stripped.
import type { TranscriptEntry } from "../api/types";
import { splitCodes } from "./errorWords";

export type ToolKind = "read" | "edit" | "execute" | "search" | "fetch" | "think" | "other";
/** "failing-before": it fails as it did at the session's start (no failure of the change); "not-run": skipped because its setup failed. */
export type GateOutcome = "pass" | "fail" | "failing-before" | "skipped" | "not-run" | "not-configured" | "unknown";

interface RowBase {
  /** Stable across updates: the first entry's id (of the row as it first appeared). */
  key: string;
  /** Every entry the row stands for, in order: expanding the row shows them all. */
  entries: TranscriptEntry[];
  role: string | null;
  module: string | null;
}

/** How a role's turn began ("Routed to …", "… takes the turn"): folded into the header over its first row. */
export interface Lead {
  lead: TranscriptEntry[];
}

export interface MessageRow extends RowBase, Lead {
  type: "user" | "agent";
  entry: TranscriptEntry;
  /** The text to show (an agent's with its HANDOFF:/REVIEW: lines taken out). */
  text: string;
}

export interface FileChange {
  change: string;
  path: string;
}

export interface ToolRow extends RowBase, Lead {
  type: "tool";
  kind: ToolKind;
  /** What the call acts on: a path, a command, a pattern. */
  target: string;
  /** `ended`: its turn ended before it reported a result. */
  status: "running" | "done" | "failed" | "ended";
  /** The result's output (the fenced block), when it had one. */
  output: string | null;
  /** The output as a unified diff, when it is one. */
  diff: string | null;
  added: number | null;
  removed: number | null;
  changes: FileChange[];
  /** Paths of this call's edits that Kiln put back (outside the role's allowed paths). */
  putBack: string[];
}

export interface GateItem {
  entry: TranscriptEntry;
  name: string;
  outcome: GateOutcome;
}

export interface GatesRow extends RowBase {
  type: "gates";
  gates: GateItem[];
  /** The role a failed gate went back to (the engine's "**gate `x` → role**" handoff, folded in). */
  fixBy: string | null;
  passed: number;
  failed: string[];
  /** Gates failing as they did before the session: no failure of the change. */
  failingBefore: number;
  skipped: number;
  notRun: number;
  notConfigured: number;
}

export interface NotesRow extends RowBase {
  type: "notes";
}

/** A system line the user should see: a pause, an approval wait, a put-back nobody's tool row carries. */
export interface NoticeRow extends RowBase {
  type: "notice";
  entry: TranscriptEntry;
  tone: "info" | "warn";
}

export interface ErrorRow extends RowBase {
  type: "error";
  /** The error in words (codes taken out; markdown). */
  text: string;
  codes: string[];
  /** What stays behind "details": the agent's raw message, when words were put before it. */
  detail: string | null;
  /** How many times it was said. */
  count: number;
  blocked: boolean;
}

export interface Handoff {
  from: string | null;
  to: string | null;
  /** What the bold head says when it is not "from → to" (e.g. "Blocked"). */
  title: string;
  reason: string;
  blocked: boolean;
}

export interface HandoffRow extends RowBase {
  type: "handoff";
  entry: TranscriptEntry;
  handoff: Handoff;
  /** "review → pass|changes": a review verdict rather than a handoff. */
  review: "pass" | "changes" | null;
}

export type Row = MessageRow | ToolRow | GatesRow | NotesRow | NoticeRow | ErrorRow | HandoffRow;

// ---- reading the engine's formats (src-tauri/engine/src/turn.rs, chain.rs, gates.rs) ----

const TOOL_KINDS = ["read", "edit", "execute", "search", "fetch", "think", "other"];
const CHANGE_KINDS = ["add", "update", "delete", "added", "updated", "deleted", "modified", "created", "removed"];
/** "**kind** `title`" (a call) or "**change** `path`" (a file change). */
const BOLD_CODE = /^\s*\*\*([a-z-]+)\*\*\s+`([^\n]*)`\s*$/;
const RESULT = /^\s*↳\s*(done|failed)\b/i;
const GATE_HEAD = /^\s*\*\*([^*\n]+)\*\*\s+(passed|failed|failing[- ]before|skipped|not[- ]configured)\b/i;
/** A gate its failed setup kept from running (gates.rs): "**tests** in `@shop/cart`: not run: setup failed: …". */
const GATE_NOT_RUN = /^\s*\*\*([^*\n]+)\*\*(?:\s+in\s+`[^`\n]*`)?\s*:\s*not run\b/i;
const HEAD_OUTCOME: Record<string, GateOutcome> = {
  passed: "pass",
  failed: "fail",
  "failing-before": "failing-before",
  skipped: "skipped",
  "not-configured": "not-configured",
};
/** A protocol line as the engine reads it (handoff.rs, review.rs): emphasis and quote marks around `HANDOFF:`/`REVIEW:`. */
const PROTOCOL_LINE = /^[\s*_`>#]*(HANDOFF|REVIEW)[*_`]*\s*:/i;
const PUT_BACK = /^\s*Put back \d+ change\(s\) outside what/;
/** System lines that say what went wrong (chain.rs, turn.rs, planner_agent.rs). */
const ERROR_LINE = [
  /could not start:/i,
  /^\s*Kiln could not go on:/i,
  /^\s*The agent reported:/i,
  /^\s*Planning stopped:/i,
  /\[[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\]/,
];
/** The lines that start a role's turn (chain.rs, turn.rs): routing, "takes the turn", the review's start, a retry, an approval. */
const TURN_START = [
  /^\s*Routed to\b/,
  /takes the turn in\b/,
  /reviews `[^`]+` before it can be delivered/,
  /^\s*Retrying the\b/,
  /^\s*Approved the specification\b/,
];
const PLANNER = /^\s*\*\*Planner( agent)?\*\* —/;
/** System lines that ask something of the user or say where the session stands; they stay in view. */
const NOTICE_LINE = [
  PLANNER,
  /^\s*Paused\b/i,
  /^\s*Waiting for your approval/i,
  /^\s*Stopped by the operator/i,
  // A permission request in the chat (operator.rs): asked, answered, or gone unanswered.
  /^\s*The agent asks permission for\b/,
  /^\s*You (allowed|refused) it\b/,
  /^\s*The request for .* went unanswered:/,
  /asks; your answer goes back/i,
  /^\s*The review passed/i,
  /^\s*The request is reported/i,
  /^\s*The review of .* ended without/i,
  /^\s*Rejected\b/i,
];

export function toolCall(text: string): { kind: ToolKind; title: string } | null {
  const m = BOLD_CODE.exec(text);
  if (!m || !TOOL_KINDS.includes(m[1])) return null;
  return { kind: m[1] as ToolKind, title: m[2] };
}

export function fileChange(text: string): FileChange | null {
  const m = BOLD_CODE.exec(text);
  if (!m || !CHANGE_KINDS.includes(m[1])) return null;
  return { change: m[1], path: m[2] };
}

export function toolResult(text: string): { status: "done" | "failed"; output: string | null } | null {
  const m = RESULT.exec(text);
  if (!m) return null;
  const fence = /```[^\n]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  const rest = text.slice(m[0].length).trim();
  const output = fence ? fence[1] : rest || null;
  return { status: m[1].toLowerCase() as "done" | "failed", output };
}

/** Claude titles a call "Read /path", "Grep pattern"; a command is its own title. The target drops the tool's name. */
export function toolTarget(kind: ToolKind, title: string): string {
  const named = /^([A-Z][A-Za-z]+)\s+(.+)$/.exec(title);
  const target = kind !== "execute" && named ? named[2] : title;
  return shortPath(target);
}

/** A session's working copy is ".../sessions/<id>/workspace/": paths read from there on. */
export function shortPath(path: string): string {
  const at = path.indexOf("/workspace/");
  return at >= 0 && path.startsWith("/") ? path.slice(at + "/workspace/".length) : path;
}

/** +/− counts and the diff, when the output is a unified diff (or a patch); none otherwise. */
export function diffStats(output: string | null): { added: number; removed: number; diff: string } | null {
  if (!output || !/^(@@ |diff --git |--- |\+\+\+ )/m.test(output)) return null;
  let added = 0;
  let removed = 0;
  for (const line of output.split("\n")) {
    if (line.startsWith("+") && !line.startsWith("+++")) added++;
    else if (line.startsWith("-") && !line.startsWith("---")) removed++;
  }
  return { added, removed, diff: output };
}

/** A gate entry's outcome, from the engine's "**gate** passed|failed|failing before|skipped|not configured …" (or "…: not run") head, else its words and marks. */
export function gateOutcome(text: string): GateOutcome {
  if (GATE_NOT_RUN.test(text)) return "not-run";
  const head = GATE_HEAD.exec(text);
  if (head) return HEAD_OUTCOME[head[2].toLowerCase().replace(" ", "-")];
  const t = text.replace(/\b0\s+(failed|failures?|errors?)\b/gi, "");
  if (/\b(fail(ed|s|ures?)?|errors?)\b/i.test(t) || /[✗❌]/.test(t)) return "fail";
  if (/\b(pass(ed|es)?|ok|succeeded)\b/i.test(t) || /[✓✔✅]/.test(t)) return "pass";
  return "unknown";
}

export function gateName(text: string): string {
  const head = GATE_HEAD.exec(text) ?? GATE_NOT_RUN.exec(text);
  return head ? head[1].replace(/`/g, "").trim() : "gate";
}

/** Reads "**from → to**: reason" or "**Blocked**: reason"; anything else is all reason. */
export function parseHandoff(text: string): Handoff {
  const m = /^\s*\*\*(.+?)\*\*\s*:?\s*([\s\S]*)$/.exec(text);
  if (!m) return { from: null, to: null, title: "Handoff", reason: text.trim(), blocked: false };
  const head = m[1].trim();
  const reason = m[2].trim();
  const arrow = head.split(/\s*(?:→|->)\s*/);
  if (arrow.length === 2 && arrow[0] && arrow[1])
    return { from: arrow[0], to: arrow[1], title: head, reason, blocked: false };
  return { from: null, to: null, title: head, reason, blocked: /^blocked\b/i.test(head) };
}

/** The agent's text without its HANDOFF:/REVIEW: lines (shown once, as the handoff or review chip). */
export function stripProtocol(text: string): string {
  const kept = text.split("\n").filter((line) => !PROTOCOL_LINE.test(line));
  return kept
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * Streamed agent text as it may be shown: `stripProtocol`, and a last line that may be the start of one
 * still arriving ("HAND", "**REVIEW") held back until it is known not to be.
 */
export function streamingText(text: string): string {
  const lines = text.split("\n");
  const tail = (lines[lines.length - 1] ?? "").replace(/^[\s*_`>#]+/, "").toUpperCase();
  if (tail && ["HANDOFF", "REVIEW"].some((word) => word.startsWith(tail) || tail.startsWith(word))) lines.pop();
  return stripProtocol(lines.join("\n"));
}

export function hasProtocol(text: string): boolean {
  return text.split("\n").some((line) => PROTOCOL_LINE.test(line));
}

export function isErrorLine(text: string): boolean {
  return ERROR_LINE.some((re) => re.test(text));
}

/**
 * Events that matter, never folded into notes: work cut short or lost, a working copy rebuilt, a restore,
 * an update from the workspace. Warn when something was lost or needs the user, else info.
 */
const EVENT_LINE: [RegExp, "warn" | "info"][] = [
  [/^\s*Kiln stopped while\b/, "warn"],
  [/^\s*The working copy was (missing|damaged)\b/, "warn"],
  [/^\s*Updated from the workspace:.*\*\*\d+ conflicts?\*\*/s, "warn"],
  [/^\s*The working copy was removed by clean-up\b/, "info"],
  [/^\s*Restored the (workspace|session's working copy) to\b/, "info"],
  [/^\s*Updated from the workspace:/, "info"],
];

export function eventTone(text: string): "warn" | "info" | null {
  return EVENT_LINE.find(([re]) => re.test(text))?.[1] ?? null;
}

/** Where the session will work, as the planner found it ("**Planner** — …", "**Planner agent** — …"). */
export function isPlannerLine(text: string): boolean {
  return PLANNER.test(text);
}

export function isNoticeLine(text: string): boolean {
  return NOTICE_LINE.some((re) => re.test(text));
}

/** The paths a put-back line lists ("- `path`" lines). */
export function putBackPaths(text: string): string[] {
  if (!PUT_BACK.test(text)) return [];
  return [...text.matchAll(/^\s*-\s*`([^`\n]+)`\s*$/gm)].map((m) => m[1]);
}

/** A Blocked entry's text split into what people read and the agent's raw message. */
export function blockedParts(reason: string): { text: string; detail: string | null; codes: string[] } {
  const m =
    /^([\s\S]*?turn failed:\s*)(The model provider [^.]*\.)\s*((?:Claude Code signed in|Codex signed in|Kiln sent the key|No key is set|The agent signed in)[\s\S]*?\.(?=\s|$))?\s*([\s\S]*)$/.exec(
      reason,
    );
  if (m) {
    const split = splitCodes(m[4]);
    // What signed in (the engine's sentence after a refusal) stays in view: it is where the fix starts.
    const signedIn = m[3] ? ` ${m[3]}` : "";
    return { text: `${m[1]}${m[2]}${signedIn}`, detail: split.text || null, codes: split.codes };
  }
  const split = splitCodes(reason);
  return { text: split.text, detail: null, codes: split.codes };
}

/** The words of an error line, without the "The agent reported:" lead, to compare it with a Blocked line's. */
function errorCore(text: string): string {
  return splitCodes(text)
    .text.replace(/^\s*The agent reported:\s*/i, "")
    .trim();
}

function samePath(a: string, b: string): boolean {
  if (!a || !b) return false;
  return a === b || a.endsWith(`/${b}`) || b.endsWith(`/${a}`);
}

// ---- folding ----

function base(entry: TranscriptEntry): RowBase {
  return { key: `e${entry.id}`, entries: [entry], role: entry.role, module: entry.module };
}

/** Folds entries (in order) into rows. Pure: the same entries always give the same rows. */
export function foldTranscript(entries: TranscriptEntry[]): Row[] {
  const rows: Row[] = [];
  /** Agent entries that were all protocol lines, waiting for the row they ride on. */
  const pendingQuiet: TranscriptEntry[] = [];
  /** Rows since the operator last spoke: where a repeated error or a tool's result is looked for. */
  let windowStart = 0;
  const last = () => rows[rows.length - 1];
  /** A role's first row takes the notes run just before it as its lead (the routing that started the turn). */
  const led = <T extends MessageRow | ToolRow>(row: T): T => {
    const prev = last();
    if (
      prev?.type === "notes" &&
      row.role &&
      prev.entries.every((e) => (e.role === row.role || e.role === null) && TURN_START.some((re) => re.test(e.text)))
    ) {
      rows.pop();
      row.lead = prev.entries;
      row.entries = [...prev.entries, ...row.entries];
      row.key = prev.key;
    }
    return row;
  };
  const inWindow = () => rows.slice(windowStart);

  const newTool = (entry: TranscriptEntry, kind: ToolKind, target: string, status: ToolRow["status"]): ToolRow => ({
    ...base(entry),
    type: "tool",
    kind,
    target,
    status,
    output: null,
    diff: null,
    added: null,
    removed: null,
    changes: [],
    putBack: [],
    lead: [],
  });

  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    switch (entry.kind) {
      case "user":
        rows.push({ ...base(entry), type: "user", entry, text: entry.text, lead: [] });
        windowStart = rows.length - 1;
        break;

      case "agent": {
        // The protocol lines show once, as their handoff or review entry: stripped when it follows in this turn, or
        // may still (the agent's text is the newest entry: its handoff is recorded right after). Only a line the engine
        // could not read (no entry followed) stays in the text, so nothing the agent said is lost.
        const shownLater = hasProtocol(entry.text) && (handoffFollows(entries, i) || i === entries.length - 1);
        const text = shownLater ? stripProtocol(entry.text) : entry.text;
        if (text) {
          rows.push(led({ ...base(entry), type: "agent", entry, text, lead: [] }));
        } else {
          pendingQuiet.push(entry);
        }
        break;
      }

      case "tool": {
        const call = toolCall(entry.text);
        const result = call ? null : toolResult(entry.text);
        const change = call || result ? null : fileChange(entry.text);
        if (call) {
          rows.push(led(newTool(entry, call.kind, toolTarget(call.kind, call.title), "running")));
        } else if (result) {
          const open = inWindow().find(
            (r): r is ToolRow => r.type === "tool" && r.status === "running" && r.role === entry.role,
          );
          const row = open ?? newTool(entry, "other", "tool result", result.status);
          if (open) row.entries.push(entry);
          else rows.push(row);
          row.status = result.status;
          row.output = result.output;
          const stats = diffStats(result.output);
          if (stats) Object.assign(row, stats);
        } else if (change) {
          const tools = inWindow().filter((r): r is ToolRow => r.type === "tool" && r.role === entry.role);
          const owner =
            [...tools].reverse().find((r) => samePath(r.target, shortPath(change.path))) ??
            [...tools].reverse().find((r) => r.kind === "edit" && r.status !== "running" && r.changes.length === 0);
          if (owner) {
            owner.entries.push(entry);
            owner.changes.push({ change: change.change, path: shortPath(change.path) });
          } else {
            const row = newTool(entry, "edit", shortPath(change.path), "done");
            row.changes.push({ change: change.change, path: shortPath(change.path) });
            rows.push(row);
          }
        } else {
          // A tool line in no known shape: a row of its own, its first line the target.
          const first = entry.text.trim().split("\n")[0].replace(/[*`]/g, "");
          const row = newTool(entry, "other", first || "tool", "done");
          row.output = entry.text.includes("\n") ? entry.text.slice(entry.text.indexOf("\n") + 1).trim() : null;
          rows.push(row);
        }
        break;
      }

      case "gate": {
        const item: GateItem = { entry, name: gateName(entry.text), outcome: gateOutcome(entry.text) };
        const prev = last();
        const row: GatesRow =
          prev?.type === "gates"
            ? prev
            : {
                ...base(entry),
                entries: [],
                type: "gates",
                gates: [],
                fixBy: null,
                passed: 0,
                failed: [],
                failingBefore: 0,
                skipped: 0,
                notRun: 0,
                notConfigured: 0,
              };
        if (row !== prev) {
          // "Installing dependencies: …" is what the dependencies gate just below ran.
          if (prev?.type === "notes" && prev.entries.every((e) => /^\s*Installing dependencies\b/.test(e.text))) {
            rows.pop();
            row.entries.push(...prev.entries);
            row.key = prev.key;
          }
          rows.push(row);
        }
        row.entries.push(entry);
        row.gates.push(item);
        if (item.outcome === "pass") row.passed++;
        else if (item.outcome === "fail") row.failed.push(item.name);
        else if (item.outcome === "failing-before") row.failingBefore++;
        else if (item.outcome === "skipped") row.skipped++;
        else if (item.outcome === "not-run") row.notRun++;
        else if (item.outcome === "not-configured") row.notConfigured++;
        break;
      }

      case "handoff": {
        const handoff = parseHandoff(entry.text);
        if (handoff.blocked) {
          const parts = blockedParts(handoff.reason);
          const row: ErrorRow = {
            ...base(entry),
            type: "error",
            text: parts.text,
            codes: parts.codes,
            detail: parts.detail,
            count: 1,
            blocked: true,
          };
          // An error line this Blocked repeats is said once: here.
          for (const r of inWindow()) {
            if (r.type === "error" && !r.blocked && r.text && entry.text.includes(errorCore(r.entries[0].text))) {
              rows.splice(rows.indexOf(r), 1);
              row.entries.unshift(...r.entries);
              row.count += r.count;
            }
          }
          rows.push(row);
          break;
        }
        // A failed gate's handoff back to the role says what the gate run led to: it joins that run's line.
        const prev = last();
        if (prev?.type === "gates" && handoff.from && /^gate\b/.test(handoff.from) && handoff.to) {
          prev.entries.push(entry);
          prev.fixBy = handoff.to;
          break;
        }
        const review =
          handoff.from === "review" && (handoff.to === "pass" || handoff.to === "changes") ? handoff.to : null;
        const row: HandoffRow = { ...base(entry), type: "handoff", entry, handoff, review };
        rows.push(row);
        break;
      }

      default: {
        const text = entry.text;
        const paths = putBackPaths(text);
        if (paths.length > 0) {
          // Each put-back edit warns on its tool row; a path no row carries keeps the line in view.
          const tools = inWindow().filter((r): r is ToolRow => r.type === "tool");
          const unmatched: string[] = [];
          let holder: ToolRow | null = null;
          for (const path of paths) {
            const owners = tools.filter(
              (r) => samePath(r.target, path) || r.changes.some((c) => samePath(c.path, path)),
            );
            if (owners.length === 0) unmatched.push(path);
            for (const r of owners) {
              if (!r.putBack.includes(path)) r.putBack.push(path);
              holder ??= r;
            }
          }
          if (unmatched.length === 0 && holder) holder.entries.push(entry);
          else rows.push({ ...base(entry), type: "notice", entry, tone: "warn" });
        } else if (isErrorLine(text)) {
          const split = splitCodes(text);
          const same = inWindow().find((r): r is ErrorRow => r.type === "error" && !r.blocked && r.text === split.text);
          if (same) {
            same.entries.push(entry);
            same.count++;
          } else {
            rows.push({
              ...base(entry),
              type: "error",
              text: split.text,
              codes: split.codes,
              detail: null,
              count: 1,
              blocked: false,
            });
          }
        } else if (eventTone(text)) {
          rows.push({ ...base(entry), type: "notice", entry, tone: eventTone(text) ?? "info" });
        } else if (isNoticeLine(text)) {
          const prev = last();
          if (prev?.type === "handoff" && prev.review === "pass" && /^\s*The review passed/i.test(text)) {
            // "The review passed" restates the review chip just above.
            prev.entries.push(entry);
          } else if (
            prev?.type === "notice" &&
            prev.tone === "info" &&
            PLANNER.test(prev.entries[0].text) &&
            PLANNER.test(text)
          ) {
            // The rules' plan and the planner agent's answer read as one.
            prev.entries.push(entry);
          } else {
            rows.push({ ...base(entry), type: "notice", entry, tone: "info" });
          }
        } else {
          const prev = last();
          if (prev?.type === "notes") prev.entries.push(entry);
          else rows.push({ ...base(entry), type: "notes" });
        }
      }
    }
    // An agent entry that was all protocol lines rides on the next row (its handoff), so nothing is lost.
    if (pendingQuiet.length > 0 && entry.kind !== "agent") {
      const r = last();
      if (r) r.entries.unshift(...pendingQuiet.splice(0));
    }
  }
  if (pendingQuiet.length > 0) {
    const r = last();
    if (r) r.entries.push(...pendingQuiet.splice(0));
  }
  endUnfinishedTools(rows);
  return rows;
}

/**
 * A tool call still waiting for its result when its turn has ended (a handoff, an error, a stop, Kiln
 * stopping, the next message or the gates after it) will never get one: it ended, it is not running.
 */
function endUnfinishedTools(rows: Row[]) {
  let ended = false;
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row.type === "tool" && row.status === "running" && ended) row.status = "ended";
    if (
      row.type === "handoff" ||
      row.type === "error" ||
      row.type === "gates" ||
      row.type === "user" ||
      (row.type === "notice" && /^\s*(Kiln stopped while|Stopped by the operator)/.test(row.entry.text))
    ) {
      ended = true;
    }
  }
}

/** A handoff or review entry comes after entries[i] before the operator speaks again. */
function handoffFollows(entries: TranscriptEntry[], i: number): boolean {
  for (let j = i + 1; j < entries.length; j++) {
    if (entries[j].kind === "user") return false;
    if (entries[j].kind === "handoff" && !parseHandoff(entries[j].text).blocked) return true;
  }
  return false;
}

/** Agent and tool rows are grouped by role; this says whether rows[i] starts a group (and gets the role's header). */
export function rowStartsRoleGroup(rows: Row[], i: number): boolean {
  const r = rows[i];
  if (r.type !== "agent" && r.type !== "tool") return false;
  if (r.lead.length > 0) return true;
  const prev = i > 0 ? rows[i - 1] : undefined;
  if (!prev || (prev.type !== "agent" && prev.type !== "tool")) return true;
  return prev.role !== r.role || prev.module !== r.module;
}

/** Whether a gate row is the session's setup alone (the working copy's dependencies when the session started): no gate run of the change. */
export function isSetupRow(row: GatesRow): boolean {
  return row.gates.length > 0 && row.gates.every((g) => g.entry.module === null && g.name === "dependencies");
}

/** The gate run's one line: "gates: 5 passed, 1 failed (tests), 1 failing before"; the setup's "setup: dependencies installed". */
export function gatesSummary(row: GatesRow): string {
  if (isSetupRow(row)) {
    return row.passed === row.gates.length
      ? "setup: dependencies installed"
      : "setup: the dependencies did not install";
  }
  const parts: string[] = [];
  if (row.passed) parts.push(`${row.passed} passed`);
  if (row.failed.length) parts.push(`${row.failed.length} failed (${row.failed.join(", ")})`);
  if (row.failingBefore) parts.push(`${row.failingBefore} failing before`);
  if (row.skipped) parts.push(`${row.skipped} skipped`);
  if (row.notRun) parts.push(`${row.notRun} not run`);
  if (row.notConfigured) parts.push(`${row.notConfigured} not configured`);
  const unknown =
    row.gates.length -
    row.passed -
    row.failed.length -
    row.failingBefore -
    row.skipped -
    row.notRun -
    row.notConfigured;
  if (unknown) parts.push(`${unknown} other`);
  return `gates: ${parts.join(", ") || "none"}`;
}

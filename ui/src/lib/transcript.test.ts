// Tests for the transcript folding: tool calls, gate runs (failing before and not run included), notes, errors once, protocol lines, put-back warnings, and nothing lost.
import { describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../api/types";
import {
  blockedParts,
  diffStats,
  foldTranscript,
  gateName,
  gateOutcome,
  gatesSummary,
  type ErrorRow,
  type GatesRow,
  type HandoffRow,
  type MessageRow,
  type Row,
  rowStartsRoleGroup,
  streamingText,
  stripProtocol,
  type ToolRow,
  toolTarget,
} from "./transcript";
import { entryMaker, failingSession, twoTurnSession } from "./transcript.fixture";

const of = <T extends Row["type"]>(rows: Row[], type: T) =>
  rows.filter((r) => r.type === type) as (Row & { type: T })[];

describe("foldTranscript on a realistic two-turn session", () => {
  const entries = twoTurnSession();
  const rows = foldTranscript(entries);

  it("shows far fewer rows than entries", () => {
    expect(entries.length).toBeGreaterThanOrEqual(50);
    expect(rows.length).toBeLessThanOrEqual(20);
    expect(rows.length * 2).toBeLessThan(entries.length);
  });

  it("loses nothing: every entry is in exactly one row, in order", () => {
    const held = rows.flatMap((r) => r.entries.map((e) => e.id));
    expect([...held].sort((a, b) => a - b)).toEqual(entries.map((e) => e.id));
    expect(new Set(held).size).toBe(entries.length);
  });

  it("makes one row per tool call with its result and file changes", () => {
    const tools = of(rows, "tool");
    expect(tools).toHaveLength(8);
    expect(tools.map((t) => [t.kind, t.target, t.status])).toEqual([
      ["read", "modules/catalog/src/client/card.js", "done"],
      ["edit", "modules/catalog/src/client/card.js", "done"],
      ["edit", "modules/catalog/src/client/wishlist.js", "done"],
      ["edit", "package.json", "done"],
      ["execute", "npm test", "done"],
      ["execute", "npm test", "failed"],
      ["edit", "modules/catalog/test/card.test.js", "done"],
      ["execute", "npm test", "done"],
    ]);
    const edit = tools[1];
    expect(edit.entries).toHaveLength(3);
    expect(edit.changes).toEqual([{ change: "update", path: "modules/catalog/src/client/card.js" }]);
    expect([edit.added, edit.removed]).toEqual([2, 1]);
    expect(edit.diff).toContain("@@ -1,3 +1,4 @@");
    // No diff in the output: no counts.
    expect([tools[2].added, tools[2].removed]).toEqual([null, null]);
    expect(tools[2].changes[0].change).toBe("add");
    expect(tools[0].output).toContain("export function card");
  });

  it("warns on the tool row whose edit was put back, and holds the put-back line there", () => {
    const tools = of(rows, "tool");
    const pkg = tools.find((t) => t.target === "package.json")!;
    expect(pkg.putBack).toEqual(["package.json"]);
    expect(pkg.entries.some((e) => e.text.startsWith("Put back 1 change(s)"))).toBe(true);
    expect(tools.filter((t) => t.putBack.length > 0)).toHaveLength(1);
  });

  it("folds each gate run into one line, with the failed gate's way back", () => {
    const runs = of(rows, "gates");
    expect(runs.map(gatesSummary)).toEqual([
      "setup: dependencies installed",
      "gates: 5 passed, 1 failed (tests)",
      "gates: 6 passed",
    ]);
    expect(runs[1].gates).toHaveLength(6);
    expect(runs[1].fixBy).toBe("frontend-engineer");
    expect(runs[1].entries).toHaveLength(7);
  });

  it("folds routing lines into the header of the turn they started, and keeps the plan in view", () => {
    expect(of(rows, "notes")).toHaveLength(0);
    const led = rows.filter(
      (r): r is MessageRow | ToolRow => (r.type === "agent" || r.type === "tool") && r.lead.length > 0,
    );
    expect(led.map((r) => r.lead.map((e) => e.text.slice(0, 12)))).toEqual([
      ["Routed to **", "**Frontend E"],
      ["Routed to **", "**Frontend E"],
      ["**Frontend E"],
    ]);
    expect(led.every((r) => rowStartsRoleGroup(rows, rows.indexOf(r)))).toBe(true);
    const notices = of(rows, "notice");
    expect(notices).toHaveLength(1);
    expect(notices[0].entries.map((e) => e.text.slice(0, 15))).toEqual(["**Planner** — e", "**Planner agent"]);
    // "Installing dependencies" rides on the dependencies gate's line.
    expect(of(rows, "gates")[0].entries.map((e) => e.kind)).toEqual(["system", "gate"]);
  });

  it("folds a run of other system lines into one notes row", () => {
    const e = entryMaker();
    const folded = foldTranscript([
      e("user", "hi"),
      e("system", "Auto-continue is off: each handoff waits for you."),
      e("system", "Archived."),
      e("system", "Restored."),
    ]);
    expect(folded.map((r) => [r.type, r.entries.length])).toEqual([
      ["user", 1],
      ["notes", 3],
    ]);
  });

  it("never streams a protocol line, whole or arriving", () => {
    expect(streamingText("Fixed it.\n\nHANDOFF: none - fixed")).toBe("Fixed it.");
    expect(streamingText("Fixed it.\n\nHAND")).toBe("Fixed it.");
    expect(streamingText("Checked.\n**REVIEW")).toBe("Checked.");
    expect(streamingText("Hands are tied.\nHello")).toBe("Hands are tied.\nHello");
    expect(streamingText("Checked.\nREVIEW: pass - ok\nThen more")).toBe("Checked.\nThen more");
  });

  it("never folds what matters: work cut short or lost, a rebuilt copy, a restore, an update", () => {
    const e = entryMaker();
    const folded = foldTranscript([
      e("user", "hi"),
      e("system", "Auto-continue is off: each handoff waits for you."),
      e("system", "Kiln stopped while the **Engineer** turn in `app` was running, so it was cut short."),
      e(
        "system",
        "The working copy was missing; it was rebuilt from checkpoint 2 (“x”). Changes made after it, if any, were lost.",
      ),
      e("system", "Restored the workspace to the state after the starting point (turn 0)."),
      e(
        "system",
        "Updated from the workspace: took in 1 file the workspace changed since the session's base (`a.js`). **1 conflict** in `a.js`: …",
      ),
      e(
        "system",
        "Updated from the workspace: took in 2 files the workspace changed since the session's base (`a.js`, `b.js`). No conflicts.",
      ),
    ]);
    expect(folded.map((r) => [r.type, r.type === "notice" ? r.tone : null])).toEqual([
      ["user", null],
      ["notes", null],
      ["notice", "warn"],
      ["notice", "warn"],
      ["notice", "info"],
      ["notice", "warn"],
      ["notice", "info"],
    ]);
  });

  it("ends a tool call whose turn ended without its result, and keeps a live one running", () => {
    const e = entryMaker();
    const cut = foldTranscript([
      e("user", "tick"),
      e("tool", "**execute** `for i in 1 2 3; do sleep 1; done`", "engineer"),
      e("system", "Kiln stopped while the **Engineer** turn in `app` was running, so it was cut short."),
    ]);
    expect(of(cut, "tool")[0].status).toBe("ended");
    const live = foldTranscript([e("user", "tick"), e("tool", "**execute** `sleep 9`", "engineer")]);
    expect(of(live, "tool")[0].status).toBe("running");
  });

  it("takes only the lines that started a turn into its header", () => {
    const e = entryMaker();
    const folded = foldTranscript([
      e("system", "Auto-continue is on: handoffs start the next turn by themselves.", null),
      e("agent", "Working.", "ux-designer"),
    ]);
    expect(folded.map((r) => r.type)).toEqual(["notes", "agent"]);
    expect((folded[1] as MessageRow).lead).toEqual([]);
  });

  it("strips HANDOFF:/REVIEW: lines from agent text and shows each once, as its chip", () => {
    const agents = of(rows, "agent");
    for (const a of agents) expect(a.text).not.toMatch(/HANDOFF|REVIEW:/);
    expect(agents.map((a) => a.text)).toContain("Added a wishlist heart to each product card.");
    const chips = of(rows, "handoff");
    expect(chips.map((c) => [c.handoff.from, c.handoff.to, c.review])).toEqual([
      ["frontend-engineer", "none", null],
      ["frontend-engineer", "none", null],
      ["review", "pass", "pass"],
    ]);
    // The review's "ready" line rides on its chip.
    expect(chips[2].entries.map((e) => e.kind)).toEqual(["handoff", "system"]);
  });

  it("groups a role's agent and tool rows under one header", () => {
    const heads = rows.map((_, i) => rowStartsRoleGroup(rows, i));
    const firstAgent = rows.findIndex((r) => r.type === "agent");
    expect(heads[firstAgent]).toBe(true);
    expect(heads[firstAgent + 1]).toBe(false);
  });

  it("is pure: folding twice gives equal rows", () => {
    expect(foldTranscript(entries)).toEqual(rows);
  });
});

describe("errors show once, in words", () => {
  const rows = foldTranscript(failingSession());
  const errors = of(rows, "error");

  it("collapses repeated identical error lines into one with a count, codes taken out of the words", () => {
    expect(errors[0]).toMatchObject({ count: 3, codes: ["DRIVER_NOT_FOUND"], blocked: false });
    expect(errors[0].text).toBe("The turn for your message could not start: claude is not installed or not on PATH");
    expect(errors[0].entries).toHaveLength(3);
  });

  it("says a Blocked turn once, with the provider's words first and its raw message behind details", () => {
    const blocked = errors.find((e) => e.blocked)!;
    expect(blocked.text).toBe("the Frontend Engineer turn failed: The model provider refused the credentials (401).");
    expect(blocked.detail).toBe("API Error: 401 invalid x-api-key");
    // "The agent reported: …" said the same: it folds into the Blocked row.
    expect(blocked.count).toBe(2);
    expect(errors.filter((e) => e.text.includes("401"))).toHaveLength(1);
  });

  it("keeps what signed in beside a refusal in view, the provider's raw message behind details", () => {
    const parts = blockedParts(
      "the Engineer turn failed: The model provider refused the credentials (401). Claude Code signed in with its own login (run `claude`, then `/login`; kept in `~/.claude`). API Error: 401 invalid x-api-key",
    );
    expect(parts.text).toBe(
      "the Engineer turn failed: The model provider refused the credentials (401). Claude Code signed in with its own login (run `claude`, then `/login`; kept in `~/.claude`).",
    );
    expect(parts.detail).toBe("API Error: 401 invalid x-api-key");
    const key = blockedParts(
      "the Engineer turn failed: The model provider refused the credentials (401). Kiln sent the key set in Settings for http://127.0.0.1:9/v1 (fingerprint `ab12`). Incorrect API key",
    );
    expect(key.text).toContain("for http://127.0.0.1:9/v1 (fingerprint `ab12`).");
    expect(key.detail).toBe("Incorrect API key");
  });

  it("starts counting again after the operator speaks", () => {
    const e = entryMaker();
    const line = "Kiln could not go on: the database is locked";
    const again = foldTranscript([e("system", line), e("user", "again"), e("system", line)]);
    expect(of(again, "error").map((r: ErrorRow) => r.count)).toEqual([1, 1]);
  });
});

describe("the parts", () => {
  it("strips protocol lines in the forms the engine reads", () => {
    expect(stripProtocol("Done.\n\nHANDOFF: none - ok")).toBe("Done.");
    expect(stripProtocol("Done.\n**HANDOFF:** backend-engineer - api\n")).toBe("Done.");
    expect(stripProtocol("Checked.\n\n`REVIEW: changes - fix the test`")).toBe("Checked.");
    expect(stripProtocol("> handoff: ux-designer: mockups")).toBe("");
    expect(stripProtocol("We talk about the HANDOFF: line in prose")).toBe("We talk about the HANDOFF: line in prose");
  });

  it("keeps protocol lines when no handoff entry follows (the turn failed before it)", () => {
    const e = entryMaker();
    const rows = foldTranscript([
      e("agent", "Done.\n\nHANDOFF: none - ok", "ux-designer"),
      e("handoff", "**Blocked**: the UX Designer turn failed: boom", "ux-designer"),
    ]);
    expect((rows[0] as MessageRow).text).toContain("HANDOFF: none");
  });

  it("holds protocol lines back while the agent's text is the newest entry (its handoff is recorded next)", () => {
    const e = entryMaker();
    const rows = foldTranscript([e("user", "Greet"), e("agent", "Done.\n\nHANDOFF: none - ok", "ux-designer")]);
    expect((rows[1] as MessageRow).text).toBe("Done.");
  });

  it("keeps an all-protocol agent entry on its handoff row", () => {
    const e = entryMaker();
    const rows = foldTranscript([
      e("agent", "HANDOFF: none - ok", "ux-designer"),
      e("handoff", "**ux-designer → none**: ok", "ux-designer"),
    ]);
    expect(rows).toHaveLength(1);
    expect((rows[0] as HandoffRow).entries.map((x) => x.kind)).toEqual(["agent", "handoff"]);
  });

  it("pairs parallel calls with their results in order", () => {
    const e = entryMaker();
    const rows = foldTranscript([
      e("tool", "**read** `Read /a.ts`", "r"),
      e("tool", "**search** `Grep cart`", "r"),
      e("tool", "↳ done\n\n```\na\n```", "r"),
      e("tool", "↳ failed\n\n```\nno matches\n```", "r"),
    ]) as ToolRow[];
    expect(rows.map((r) => [r.target, r.status, r.output])).toEqual([
      ["/a.ts", "done", "a"],
      ["cart", "failed", "no matches"],
    ]);
  });

  it("names targets without the tool's name, commands as they are", () => {
    expect(toolTarget("read", "Read /x/.kiln/sessions/s/workspace/src/a.ts")).toBe("src/a.ts");
    expect(toolTarget("execute", "Bash")).toBe("Bash");
    expect(toolTarget("execute", "npm run test -- --watch=false")).toBe("npm run test -- --watch=false");
    expect(toolTarget("search", "Grep TODO")).toBe("TODO");
  });

  it("counts +/− only in a unified diff", () => {
    expect(diffStats("--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c")).toMatchObject({ added: 2, removed: 1 });
    expect(diffStats("- a list item\n+ not a diff")).toBeNull();
    expect(diffStats(null)).toBeNull();
  });

  it("summarises skipped and not-configured gates apart from passes", () => {
    const e = entryMaker();
    const [row] = foldTranscript([
      e("gate", "**tests** passed in `m`"),
      e("gate", "**format** skipped in `m`: no format command applies"),
      e("gate", "**lint** not configured in `m`: add an eslint config"),
    ]) as GatesRow[];
    expect(gatesSummary(row)).toBe("gates: 1 passed, 1 skipped, 1 not configured");
  });

  it("reads a failure there before the session and a gate its failed setup kept from running, neither a failure", () => {
    const e = entryMaker();
    const text = {
      before: "**tests** failing before in `m`: 3 failures, all there before this session",
      notRun: "**typecheck** in `m`: not run: setup failed: npm ERR! 404 left-pad",
      newFailure: "**lint** failed in `m`: 1 new failure: `x`; 2 more were there before this session",
    };
    expect(gateOutcome(text.before)).toBe("failing-before");
    expect(gateName(text.before)).toBe("tests");
    expect(gateOutcome(text.notRun)).toBe("not-run");
    expect(gateName(text.notRun)).toBe("typecheck");
    expect(gateOutcome(text.newFailure)).toBe("fail");
    const [row] = foldTranscript([
      e("gate", "**dependencies** passed in `m`"),
      e("gate", text.before),
      e("gate", text.notRun),
    ]) as GatesRow[];
    expect(gatesSummary(row)).toBe("gates: 1 passed, 1 failing before, 1 not run");
    expect(row.failed).toEqual([]);
  });

  it("keeps a put-back line in view when no tool row carries its path", () => {
    const e = entryMaker();
    const rows = foldTranscript([
      e("system", "Put back 1 change(s) outside what **UX Designer** may change in `modules/a`:\n- `other/file.txt`"),
    ]);
    expect(rows[0]).toMatchObject({ type: "notice", tone: "warn" });
  });

  it("keeps a permission request, its answer and a withdrawal in view, each its own row", () => {
    const e = entryMaker();
    const rows = foldTranscript([
      e("system", "The agent asks permission for **fetch** `Fetch https://x.dev`: answer in the card.", "engineer"),
      e("system", "You allowed it once (**fetch** `Fetch https://x.dev`).", null, null),
      e("system", "The request for **fetch** `Fetch https://x.dev` went unanswered: the turn was stopped.", null, null),
    ]);
    expect(rows.map((r) => r.type)).toEqual(["notice", "notice", "notice"]);
  });

  it("folds a tool line in no known shape into a row of its own", () => {
    const e = entryMaker();
    const entries: TranscriptEntry[] = [e("tool", "ran `npm test`")];
    expect(foldTranscript(entries)[0]).toMatchObject({ type: "tool", kind: "other", target: "ran npm test" });
  });
});

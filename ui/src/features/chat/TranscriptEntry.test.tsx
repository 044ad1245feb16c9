// Tests for transcript entry rendering by kind (user, agent, tool, handoff, system, gate: failing before and not run included) and its parsers.
import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { makeEntry } from "../../test/fixtures";
import { EntryView, gateOutcome, parseHandoff, startsRoleGroup, toolParts } from "./TranscriptEntry";
import { TranscriptView } from "./TranscriptView";

describe("gateOutcome", () => {
  it("reads pass and fail from the gate's text", () => {
    expect(gateOutcome("Gate `test` passed")).toBe("pass");
    expect(gateOutcome("12 passed, 0 failed")).toBe("pass");
    expect(gateOutcome("tests FAILED (3 failures)")).toBe("fail");
    expect(gateOutcome("✓ build")).toBe("pass");
    expect(gateOutcome("running lint")).toBe("unknown");
  });

  it("reads the engine's head first: skipped is never a pass, whatever the rest says", () => {
    expect(gateOutcome("**tests** passed in `@shop/cart` — `npm test` (1.2 s)")).toBe("pass");
    expect(gateOutcome("**typecheck** failed in `@shop/cart` — `tsc --noEmit` (0.8 s)\n\n```\n0 errors? no\n```")).toBe(
      "fail",
    );
    expect(gateOutcome("**format** skipped in `@shop/passed-errors`: no format command applies to this module")).toBe(
      "skipped",
    );
    expect(
      gateOutcome("**lint** not-configured in `@shop/cart`: no linter configured; eslint would fail nothing"),
    ).toBe("not-configured");
    expect(gateOutcome("**lint** not configured in `@shop/cart`: add an eslint config")).toBe("not-configured");
  });
});

describe("EntryView", () => {
  it("renders markdown without raw HTML and marks the kind", () => {
    render(
      <EntryView entry={makeEntry(1, { kind: "system", text: "# Plan\n\n- one\n\n<script>alert(1)</script>" })} />,
    );
    const entry = screen.getByTestId("entry");
    expect(entry).toHaveAttribute("data-kind", "system");
    expect(screen.getByRole("heading", { name: "Plan" })).toBeInTheDocument();
    expect(entry.querySelector("script")).toBeNull();
  });
});

describe("parsers", () => {
  it("reads handoffs and blocks", () => {
    expect(parseHandoff("**backend-engineer → frontend-engineer**: the API is ready")).toEqual({
      from: "backend-engineer",
      to: "frontend-engineer",
      title: "backend-engineer → frontend-engineer",
      reason: "the API is ready",
      blocked: false,
    });
    expect(parseHandoff("**Blocked**: the turn failed")).toMatchObject({
      from: null,
      title: "Blocked",
      reason: "the turn failed",
      blocked: true,
    });
    expect(parseHandoff("plain words")).toMatchObject({ from: null, reason: "plain words", blocked: false });
  });

  it("splits tool entries into a summary and a body", () => {
    expect(toolParts("**edit** `Write /src/a.ts`")).toEqual({
      summary: "**edit** `Write /src/a.ts`",
      body: "",
      fenced: false,
      status: null,
    });
    expect(toolParts("↳ failed\n\n```\nboom\n```")).toMatchObject({
      summary: "↳ failed",
      fenced: true,
      status: "failed",
    });
  });

  it("groups consecutive agent/tool entries of one role", () => {
    const entries = [
      makeEntry(1, { kind: "system" }),
      makeEntry(2, { kind: "agent", role: "ux-designer" }),
      makeEntry(3, { kind: "tool", role: "ux-designer" }),
      makeEntry(4, { kind: "agent", role: "backend-engineer" }),
    ];
    expect(entries.map((_, i) => startsRoleGroup(entries, i))).toEqual([false, true, false, true]);
  });
});

describe("EntryView by kind", () => {
  it("draws a failure there before the session amber as failing before, and a gate kept from running as not run", () => {
    const { unmount } = render(
      <EntryView
        entry={makeEntry(1, {
          kind: "gate",
          text: "**tests** failing before in `@shop/cart`: 3 failures, all there before this session",
        })}
      />,
    );
    let entry = screen.getByTestId("entry");
    expect(entry).toHaveAttribute("data-outcome", "failing-before");
    expect(entry).toHaveClass("entry-gate-failing-before");
    expect(entry.querySelector(".entry-outcome")).toHaveTextContent("failing before");
    unmount();

    render(
      <EntryView
        entry={makeEntry(2, {
          kind: "gate",
          text: "**typecheck** in `@shop/cart`: not run: setup failed: npm ERR! 404",
        })}
      />,
    );
    entry = screen.getByTestId("entry");
    expect(entry).toHaveAttribute("data-outcome", "not-run");
    expect(entry.querySelector(".entry-outcome")).toHaveTextContent("not run");
  });

  it("draws user messages as plain-text bubbles", () => {
    render(<EntryView entry={makeEntry(1, { kind: "user", text: "Use <b>bold</b> coupons" })} />);
    const entry = screen.getByTestId("entry");
    expect(entry.querySelector(".bubble")).toHaveTextContent("Use <b>bold</b> coupons");
    expect(entry.querySelector("b")).toBeNull();
  });

  it("collapses a tool row with a fenced output block, and expands it on click", () => {
    render(
      <EntryView
        entry={makeEntry(1, {
          kind: "tool",
          role: "backend-engineer",
          text: "↳ done\n\n```\nall 12 tests passed\n```",
        })}
      />,
    );
    const toggle = screen.getByTestId("tool-toggle");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(toggle).toHaveTextContent("↳ done");
    expect(screen.queryByText("all 12 tests passed")).not.toBeInTheDocument();
    fireEvent.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(screen.getByTestId("tool-body")).toHaveTextContent("all 12 tests passed");
  });

  it("shows a one-line tool call as a plain row with inline markdown", () => {
    render(<EntryView entry={makeEntry(1, { kind: "tool", text: "**edit** `Write /src/cart.ts`" })} />);
    expect(screen.queryByTestId("tool-toggle")).not.toBeInTheDocument();
    const entry = screen.getByTestId("entry");
    expect(entry.querySelector("strong")).toHaveTextContent("edit");
    expect(entry.querySelector("code")).toHaveTextContent("Write /src/cart.ts");
  });

  it("shows a handoff as from → to with the reason", () => {
    render(
      <EntryView
        entry={makeEntry(1, { kind: "handoff", text: "**backend-engineer → frontend-engineer**: wire the endpoint" })}
      />,
    );
    expect(screen.getByTestId("handoff-from")).toHaveTextContent("Backend Engineer");
    expect(screen.getByTestId("handoff-to")).toHaveTextContent("Frontend Engineer");
    expect(screen.getByTestId("entry")).toHaveTextContent("wire the endpoint");
  });

  it("puts one role header over a run of one role's entries", () => {
    render(
      <TranscriptView
        entries={[
          makeEntry(1, { kind: "agent", role: "ux-designer", text: "Sketching" }),
          makeEntry(2, { kind: "tool", role: "ux-designer", text: "**edit** `Write SPEC.md`" }),
          makeEntry(3, { kind: "handoff", role: "ux-designer", text: "**ux-designer → frontend-engineer**: build it" }),
          makeEntry(4, { kind: "agent", role: "frontend-engineer", text: "Building" }),
        ]}
      />,
    );
    const heads = screen.getAllByTestId("role-head");
    expect(heads.map((h) => within(h).getByText(/Designer|Engineer/).textContent)).toEqual([
      "UX Designer",
      "Frontend Engineer",
    ]);
  });
});

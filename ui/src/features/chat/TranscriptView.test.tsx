// Tests for the chat list: folded rows, virtual rows when long, following the end, the "New activity" pill, and the live bubble and status line.
import { act, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../../api/types";
import type { LiveView } from "../../lib/live";
import { entryMaker, failingSession, twoTurnSession } from "../../lib/transcript.fixture";
import { noteSent } from "../../lib/sent";
import { makeEntry, makeLive } from "../../test/fixtures";
import { TranscriptView, VIRTUALIZE_AT } from "./TranscriptView";
import { ModuleWordsContext } from "../../lib/moduleWords";

describe("TranscriptView", () => {
  it("renders every entry of a short transcript in order", () => {
    render(<TranscriptView entries={[makeEntry(1), makeEntry(2, { kind: "user" })]} />);
    const entries = screen.getAllByTestId("entry");
    expect(entries.map((e) => e.getAttribute("data-kind"))).toEqual(["agent", "user"]);
  });

  it("virtualizes a long transcript (only a window of rows is in the DOM)", () => {
    const many = Array.from({ length: VIRTUALIZE_AT + 50 }, (_, i) =>
      makeEntry(i + 1, { kind: i % 2 ? "agent" : "user" }),
    );
    render(<TranscriptView entries={many} />);
    const list = screen.getByTestId("transcript").querySelector("ol")!;
    expect(list).toHaveClass("entries-virtual");
    expect(screen.queryAllByTestId("entry").length).toBeLessThan(many.length);
  });
});

describe("the folded session", () => {
  it("draws a two-turn session as compact rows, and expanding them shows every entry", () => {
    const entries = twoTurnSession();
    render(<TranscriptView entries={entries} />);
    const rows = screen.getAllByTestId("entry");
    expect(rows.length).toBeLessThanOrEqual(20);

    // Protocol lines appear once: in the chips, not in the agent's text.
    const transcript = screen.getByTestId("transcript");
    expect(transcript.textContent).not.toMatch(/HANDOFF:|REVIEW:/);
    expect(within(transcript).getAllByText(/the wishlist works/)).toHaveLength(1);

    // Open everything that folds: tools, gate runs, routing leads.
    for (const toggle of screen.getAllByTestId("tool-toggle"))
      if (!(toggle as HTMLButtonElement).disabled) fireEvent.click(toggle);
    for (const toggle of [...screen.getAllByTestId("gates-toggle"), ...screen.getAllByTestId("lead-toggle")])
      fireEvent.click(toggle);
    const text = transcript.textContent!;
    expect(text).toContain("12 passing (1.1 s)");
    expect(text).toContain("expected 1 heart, found 0");
    expect(text).toContain("Routed to Frontend Engineer: the `tests` gate failed after its turn.".replace(/`/g, ""));
    expect(screen.getAllByText(/typecheck/).length).toBeGreaterThanOrEqual(2);
    expect(screen.getByTestId("tool-diff")).toHaveTextContent("+ const heart");
  });

  it("shows a tool row's kind, target, +/− counts and the put-back warning", () => {
    render(<TranscriptView entries={twoTurnSession()} />);
    const tools = screen.getAllByTestId("entry").filter((e) => e.getAttribute("data-row") === "tool");
    expect(tools.map((t) => t.getAttribute("data-tool-kind"))).toEqual([
      "read",
      "edit",
      "edit",
      "edit",
      "execute",
      "execute",
      "edit",
      "execute",
    ]);
    expect(within(tools[1]).getByTestId("tool-counts")).toHaveTextContent("+2 −1");
    expect(within(tools[2]).queryByTestId("tool-counts")).toBeNull();
    const warned = tools.filter((t) => within(t).queryByTestId("tool-put-back"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toHaveTextContent("package.json");
    expect(tools[5]).toHaveAttribute("data-status", "failed");
  });

  it("sums each gate run in one line", () => {
    render(<TranscriptView entries={twoTurnSession()} />);
    expect(screen.getAllByTestId("gate-run-summary").map((s) => s.textContent)).toEqual([
      "setup: dependencies installed",
      "gates: 5 passed, 1 failed (tests)",
      "gates: 6 passed",
    ]);
  });

  it("says an error once, in words, with a count and its code behind details", () => {
    render(<TranscriptView entries={failingSession()} />);
    const errors = screen.getAllByTestId("entry").filter((e) => e.getAttribute("data-row") === "error");
    expect(errors).toHaveLength(2);
    expect(errors[0]).toHaveTextContent("could not start: claude is not installed or not on PATH");
    expect(errors[0].textContent).not.toContain("DRIVER_NOT_FOUND");
    expect(within(errors[0]).getByTestId("error-count")).toHaveTextContent("×3");
    fireEvent.click(within(errors[0]).getByTestId("error-details-toggle"));
    expect(within(errors[0]).getByTestId("error-details")).toHaveTextContent(
      "DRIVER_NOT_FOUND The agent's program is not installed or not found",
    );

    expect(errors[1]).toHaveTextContent("Blocked");
    expect(errors[1]).toHaveTextContent("The model provider refused the credentials (401).");
    expect(errors[1].textContent).not.toContain("invalid x-api-key");
  });

  it("leaves out who takes the turn in which module where the repository has one", () => {
    const e = entryMaker();
    const entries = [
      e("user", "Add a tick"),
      e("system", "**Engineer** takes the turn in `ticker`.", "engineer", "ticker"),
      e("agent", "Added it.", "engineer", "ticker"),
    ];
    const { unmount } = render(<TranscriptView entries={entries} />);
    expect(screen.getByTestId("lead-toggle")).toHaveTextContent("Engineer takes the turn in ticker");
    unmount();
    render(
      <ModuleWordsContext.Provider value={false}>
        <TranscriptView entries={entries} />
      </ModuleWordsContext.Provider>,
    );
    expect(screen.queryByTestId("lead-toggle")).toBeNull();
    expect(screen.getByTestId("transcript")).not.toHaveTextContent("takes the turn");
    expect(screen.getByTestId("transcript")).toHaveTextContent("Added it.");
  });

  it("renders backticks in notes as code, not as characters", () => {
    const e = entryMaker();
    render(<TranscriptView entries={[e("system", "Kiln could not go on: `npm` is missing [TOOLCHAIN_MISSING]")]} />);
    const row = screen.getByTestId("entry");
    expect(row.textContent).not.toContain("`");
    expect(row.querySelector("code")).toHaveTextContent("npm");
  });
});

describe("a running command", () => {
  const live = (output: string | undefined): LiveView => makeLive({ output });

  it("shows what it printed so far under its row, and how long it has run, until its result comes", () => {
    const e = entryMaker();
    const call = { ...e("tool", "**execute** `./count.sh`"), createdAt: new Date(Date.now() - 5_000).toISOString() };
    const { rerender } = render(<TranscriptView entries={[call]} live={live("tick 1\ntick 2\n")} />);
    expect(screen.getByTestId("tool-live-output")).toHaveTextContent("tick 1 tick 2");
    expect(screen.getByTestId("tool-running").textContent).toMatch(/^running · [5-9] s$/);

    // Only the end of a long output is shown.
    const long = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");
    rerender(<TranscriptView entries={[call]} live={live(long)} />);
    const shown = screen.getByTestId("tool-live-output").textContent!;
    expect(shown).toContain("line 40");
    expect(shown).not.toContain("line 28\n");

    // The result is in: the row shows it, the live output is gone.
    const done = e("tool", "↳ done\n\n```\ntick 1\ntick 2\n```");
    rerender(<TranscriptView entries={[call, done]} live={live(undefined)} />);
    expect(screen.queryByTestId("tool-live-output")).toBeNull();
    expect(screen.queryByTestId("tool-running")).toBeNull();
  });

  it("shows no output where the agent reports it only at the end, and only on the row still running", () => {
    const e = entryMaker();
    const first = e("tool", "**execute** `npm ci`");
    const firstDone = e("tool", "↳ done");
    const second = e("tool", "**execute** `npm test`");
    render(<TranscriptView entries={[first, firstDone, second]} live={live(undefined)} />);
    expect(screen.queryByTestId("tool-live-output")).toBeNull();
    expect(screen.getAllByTestId("tool-running")).toHaveLength(1);
  });
});

/** jsdom lays nothing out: the scroller's heights and position are set by the test. */
const metrics = { scrollHeight: 1000, clientHeight: 400 };
const tops = new WeakMap<Element, number>();
const saved: Record<string, PropertyDescriptor | undefined> = {};

function isScroller(el: Element) {
  return el.getAttribute("data-testid") === "transcript";
}

beforeEach(() => {
  for (const key of ["scrollHeight", "clientHeight", "scrollTop"])
    saved[key] = Object.getOwnPropertyDescriptor(Element.prototype, key);
  Object.defineProperty(Element.prototype, "scrollHeight", {
    configurable: true,
    get(this: Element) {
      return isScroller(this) ? metrics.scrollHeight : 0;
    },
  });
  Object.defineProperty(Element.prototype, "clientHeight", {
    configurable: true,
    get(this: Element) {
      return isScroller(this) ? metrics.clientHeight : 0;
    },
  });
  Object.defineProperty(Element.prototype, "scrollTop", {
    configurable: true,
    get(this: Element) {
      return tops.get(this) ?? 0;
    },
    set(this: Element, v: number) {
      tops.set(this, Math.max(0, Math.min(v, metrics.scrollHeight - metrics.clientHeight)));
    },
  });
  metrics.scrollHeight = 1000;
});

afterEach(() => {
  for (const [key, d] of Object.entries(saved)) {
    if (d) Object.defineProperty(Element.prototype, key, d);
    else delete (Element.prototype as unknown as Record<string, unknown>)[key];
  }
});

function scrollTo(top: number) {
  const el = screen.getByTestId("transcript");
  el.scrollTop = top;
  fireEvent.scroll(el);
}

describe("following the end", () => {
  const base = (): TranscriptEntry[] => {
    const e = entryMaker();
    return [e("user", "Add a wishlist", "frontend-engineer"), e("agent", "Looking.", "frontend-engineer")];
  };

  it("starts at the bottom and stays there as entries arrive", () => {
    const entries = base();
    const { rerender } = render(<TranscriptView entries={entries} />);
    const el = screen.getByTestId("transcript");
    expect(el.scrollTop).toBe(600);
    metrics.scrollHeight = 1400;
    rerender(
      <TranscriptView
        entries={[...entries, makeEntry(3, { kind: "agent", role: "frontend-engineer", text: "More." })]}
      />,
    );
    expect(el.scrollTop).toBe(1000);
    expect(screen.queryByTestId("new-activity")).toBeNull();
  });

  it("stays put when the user scrolled up, shows the pill, and the pill brings them to the end", () => {
    const entries = base();
    const { rerender } = render(<TranscriptView entries={entries} />);
    const el = screen.getByTestId("transcript");
    scrollTo(100);
    expect(screen.queryByTestId("new-activity")).toBeNull();
    metrics.scrollHeight = 1400;
    rerender(
      <TranscriptView
        entries={[...entries, makeEntry(3, { kind: "agent", role: "frontend-engineer", text: "More." })]}
      />,
    );
    expect(el.scrollTop).toBe(100);
    const pill = screen.getByTestId("new-activity");
    expect(pill).toHaveTextContent("New activity");
    fireEvent.click(pill);
    expect(el.scrollTop).toBe(1000);
    expect(screen.queryByTestId("new-activity")).toBeNull();
  });

  it("keeps following when the content grew before the scroll event of its own stick arrived", () => {
    const entries = base();
    const { rerender } = render(<TranscriptView entries={entries} />);
    const el = screen.getByTestId("transcript");
    expect(el.scrollTop).toBe(600);
    // The browser dispatches the scroll event a frame later; by then a row grew by 800px.
    metrics.scrollHeight = 1800;
    fireEvent.scroll(el);
    expect(el.scrollTop).toBe(1400);
    metrics.scrollHeight = 2000;
    rerender(<TranscriptView entries={[...entries, makeEntry(3, { kind: "agent", text: "More." })]} />);
    expect(el.scrollTop).toBe(1600);
    expect(screen.queryByTestId("new-activity")).toBeNull();
  });

  it("hides the pill when the user scrolls back down by hand", () => {
    const entries = base();
    const { rerender } = render(<TranscriptView entries={entries} />);
    scrollTo(0);
    rerender(<TranscriptView entries={[...entries, makeEntry(3, { kind: "agent", text: "More." })]} />);
    expect(screen.getByTestId("new-activity")).toBeInTheDocument();
    scrollTo(590);
    expect(screen.queryByTestId("new-activity")).toBeNull();
  });

  it("goes to the end when the operator sends a message from this window, even scrolled up", () => {
    const entries = base();
    const { rerender } = render(<TranscriptView entries={entries} />);
    const el = screen.getByTestId("transcript");
    scrollTo(0);
    act(() => noteSent("s1"));
    expect(el.scrollTop).toBe(600);
    // The message and the turn's activity then arrive, and the chat keeps following.
    metrics.scrollHeight = 1600;
    rerender(<TranscriptView entries={[...entries, makeEntry(3, { kind: "user", text: "And a counter" })]} />);
    expect(el.scrollTop).toBe(1200);
    expect(screen.queryByTestId("new-activity")).toBeNull();
  });

  it("does not pull the reader away for a message sent elsewhere or another session's send", () => {
    const entries = base();
    const { rerender } = render(<TranscriptView entries={entries} />);
    const el = screen.getByTestId("transcript");
    scrollTo(0);
    act(() => noteSent("another-session"));
    expect(el.scrollTop).toBe(0);
    metrics.scrollHeight = 1600;
    rerender(<TranscriptView entries={[...entries, makeEntry(3, { kind: "user", text: "From another tab" })]} />);
    expect(el.scrollTop).toBe(0);
    expect(screen.getByTestId("new-activity")).toBeInTheDocument();
  });

  it("follows in the virtual list too", () => {
    const many = Array.from({ length: VIRTUALIZE_AT + 20 }, (_, i) =>
      makeEntry(i + 1, { kind: i % 2 ? "agent" : "user" }),
    );
    metrics.scrollHeight = 20000;
    const { rerender } = render(<TranscriptView entries={many} />);
    const el = screen.getByTestId("transcript");
    expect(screen.getByTestId("transcript").querySelector("ol")).toHaveClass("entries-virtual");
    expect(el.scrollTop).toBe(19600);
    metrics.scrollHeight = 20100;
    rerender(<TranscriptView entries={[...many, makeEntry(many.length + 1, { kind: "agent", text: "More." })]} />);
    expect(el.scrollTop).toBe(19700);
  });

  it("opens a long transcript at its end, though the virtual list writes its first offset after the stick", () => {
    // As a browser does: the virtualizer moves the chat with scrollTo (which jsdom leaves out), and every
    // row measures what the list estimated (jsdom measures 0, which the list would scroll to make up for).
    const saved = [
      [Element.prototype, "scrollTo", Object.getOwnPropertyDescriptor(Element.prototype, "scrollTo")],
      [HTMLElement.prototype, "offsetHeight", Object.getOwnPropertyDescriptor(HTMLElement.prototype, "offsetHeight")],
    ] as const;
    Object.defineProperty(Element.prototype, "scrollTo", {
      configurable: true,
      value(this: Element, options: ScrollToOptions) {
        if (options.top !== undefined) this.scrollTop = options.top;
      },
    });
    Object.defineProperty(HTMLElement.prototype, "offsetHeight", {
      configurable: true,
      get(this: HTMLElement) {
        return this.classList.contains("entry-virtual") ? 48 : 0;
      },
    });
    try {
      const many = Array.from({ length: VIRTUALIZE_AT + 20 }, (_, i) =>
        makeEntry(i + 1, { kind: i % 2 ? "agent" : "user" }),
      );
      metrics.scrollHeight = many.length * 48;
      const { rerender } = render(<TranscriptView entries={many} />);
      // The list attaches to the chat at its next render (the chat's ref is set after the list's effects).
      rerender(<TranscriptView entries={many} />);
      expect(screen.getByTestId("transcript").scrollTop).toBe(many.length * 48 - metrics.clientHeight);
      expect(screen.queryByTestId("new-activity")).toBeNull();
    } finally {
      for (const [proto, key, d] of saved) {
        if (d) Object.defineProperty(proto, key, d);
        else delete (proto as unknown as Record<string, unknown>)[key];
      }
    }
  });

  it("draws the newest rows of a long transcript at once, before it knows the chat's size", () => {
    const many = Array.from({ length: VIRTUALIZE_AT + 20 }, (_, i) =>
      makeEntry(i + 1, { kind: i % 2 ? "agent" : "user", text: `entry number ${i + 1}` }),
    );
    render(<TranscriptView entries={many} />);
    // The first render: the virtualizer has not observed the chat yet (jsdom never lays it out).
    expect(screen.getByTestId("transcript")).toHaveTextContent(`entry number ${many.length}`);
    expect(screen.queryAllByTestId("entry").length).toBeLessThan(many.length);
  });

  it("follows the live text as it grows, and shows the pill for it when scrolled up", () => {
    const entries = base();
    const live = (text: string): LiveView => ({
      sessionId: "s1",
      phase: "turn",
      role: "frontend-engineer",
      module: "@shop/catalog",
      text,
      status: null,
    });
    const { rerender } = render(<TranscriptView entries={entries} live={live("Add")} />);
    const el = screen.getByTestId("transcript");
    metrics.scrollHeight = 1100;
    rerender(<TranscriptView entries={entries} live={live("Adding the heart")} />);
    expect(el.scrollTop).toBe(700);
    scrollTo(0);
    rerender(<TranscriptView entries={entries} live={live("Adding the heart to each card")} />);
    expect(el.scrollTop).toBe(0);
    expect(screen.getByTestId("new-activity")).toBeInTheDocument();
  });
});

describe("live activity", () => {
  const entries = [makeEntry(1, { kind: "user", text: "Add a wishlist" })];
  const view = (over: Partial<LiveView>): LiveView => ({
    sessionId: "s1",
    phase: "turn",
    role: "frontend-engineer",
    module: "@shop/catalog",
    text: null,
    status: null,
    ...over,
  });

  it("streams the partial text as a growing agent bubble with markdown", () => {
    const { rerender } = render(<TranscriptView entries={entries} live={view({ text: "Adding **the heart**" })} />);
    const bubble = screen.getByTestId("live-text");
    expect(bubble).toHaveTextContent("Frontend Engineer");
    expect(bubble.querySelector("strong")).toHaveTextContent("the heart");
    rerender(<TranscriptView entries={entries} live={view({ text: "Adding **the heart** to each card." })} />);
    expect(screen.getByTestId("live-text")).toHaveTextContent("to each card.");
  });

  it("shows the provider's trouble as one updating line", () => {
    const status = {
      kind: "retrying" as const,
      message: "The model provider is overloaded (529)",
      attempt: 3,
      maxAttempts: 10,
      reason: "overloaded",
      httpStatus: 529,
    };
    const { rerender } = render(<TranscriptView entries={entries} live={view({ status })} />);
    expect(screen.getAllByTestId("live-status")).toHaveLength(1);
    expect(screen.getByTestId("live-status")).toHaveTextContent(
      "The model provider is overloaded (529) — retry 3 of 10",
    );
    expect(screen.getByTestId("live-status")).toHaveClass("live-status-warn");
    rerender(<TranscriptView entries={entries} live={view({ status: { ...status, attempt: 4 } })} />);
    expect(screen.getAllByTestId("live-status")).toHaveLength(1);
    expect(screen.getByTestId("live-status")).toHaveTextContent("retry 4 of 10");
  });

  it("shows refused credentials in red, as an alert", () => {
    const status = {
      kind: "failed" as const,
      message: "The model provider refused the credentials (401)",
      attempt: null,
      maxAttempts: null,
      reason: "auth",
      httpStatus: 401,
    };
    render(<TranscriptView entries={entries} live={view({ phase: "planning", role: null, status })} />);
    const line = screen.getByRole("alert");
    expect(line).toHaveTextContent("The model provider refused the credentials (401)");
    expect(line).toHaveClass("live-status-danger");
  });

  it("shows nothing once the live view is cleared", () => {
    const { rerender } = render(<TranscriptView entries={entries} live={view({ text: "Adding" })} />);
    act(() => rerender(<TranscriptView entries={entries} live={view({ text: null, status: null })} />));
    expect(screen.queryByTestId("live")).toBeNull();
  });
});

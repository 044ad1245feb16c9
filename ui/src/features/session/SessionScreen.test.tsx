// Tests for the session view: modules, transcript, live events, Stop, the approval card, usage, auto-continue, review states and Eject.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { fakeBackend, makeEntry, makeSession, makeSettings, makeTotals } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { FIRST_ENTRIES } from "../../state/queries";
import { SessionScreen } from "./SessionScreen";

const session = makeSession({
  title: "Add coupons",
  state: "editing",
  setup: "passed",
  modules: [
    { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
    {
      id: "@shop/coupons",
      directory: "modules/coupons",
      kind: "new",
      joinedAt: "2025-01-01T10:01:00Z",
      baseSequence: 2,
    },
  ],
});

const entries = [
  makeEntry(1, { kind: "system", text: "Planner: **edit** of `@shop/cart`" }),
  makeEntry(2, { kind: "agent", text: "Working on it" }),
  makeEntry(3, { kind: "gate", text: "tests failed: 2 of 10" }),
];

describe("SessionScreen", () => {
  it("shows the session, its modules and its transcript as markdown", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => entries });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    expect(await screen.findByRole("heading", { name: "Add coupons" })).toBeInTheDocument();
    expect(backend.call).toHaveBeenCalledWith("get_session", { sessionId: "s1" });
    expect(backend.call).toHaveBeenCalledWith("get_transcript", { sessionId: "s1", last: FIRST_ENTRIES });

    const modules = screen.getByTestId("session-modules");
    expect(modules).toHaveTextContent("@shop/cart");
    expect(modules).toHaveTextContent("modules/coupons");
    expect(within(modules).getAllByRole("listitem")[0]).toHaveTextContent("primary");
    expect(screen.getByTestId("setup-badge")).toHaveTextContent("passed");

    const rendered = await within(screen.getByTestId("transcript")).findAllByTestId("entry");
    expect(rendered.map((e) => e.getAttribute("data-kind"))).toEqual(["system", "agent", "gate"]);
    expect(rendered[0].querySelector("strong")).toHaveTextContent("edit");
    expect(rendered[2]).toHaveAttribute("data-outcome", "fail");
  });

  it("applies live transcript and session events for this session, once", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => entries });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findAllByTestId("entry");

    const at = "2025-01-01T10:10:00Z";
    act(() => {
      backend.emit({
        id: 10,
        at,
        body: { type: "transcript", entry: makeEntry(4, { kind: "tool", text: "ran `npm test`" }) },
      });
      backend.emit({
        id: 10,
        at,
        body: { type: "transcript", entry: makeEntry(4, { kind: "tool", text: "ran `npm test`" }) },
      });
      backend.emit({ id: 11, at, body: { type: "transcript", entry: makeEntry(1, { sessionId: "other" }) } });
      backend.emit({ id: 12, at, body: { type: "session", session: { ...session, state: "review", updatedAt: at } } });
    });

    await waitFor(() => expect(screen.getAllByTestId("entry")).toHaveLength(4));
    expect(screen.getAllByTestId("entry")[3]).toHaveAttribute("data-kind", "tool");
    expect(screen.getByTestId("state-badge")).toHaveTextContent("Review");
  });

  it("shows SESSION_NOT_FOUND with its code", async () => {
    const backend = fakeBackend({
      get_session: () => {
        throw { code: "SESSION_NOT_FOUND", message: "No session s9" };
      },
      get_transcript: () => [],
    });
    renderWithStore(<SessionScreen sessionId="s9" />, backend);
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("No session s9");
    expect(error).toHaveTextContent("SESSION_NOT_FOUND");
  });

  it("says so when the session is removed while open", async () => {
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [] });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findByRole("heading", { name: "Add coupons" });
    act(() => backend.emit({ id: 20, at: "2025-01-01T11:00:00Z", body: { type: "sessionRemoved", sessionId: "s1" } }));
    expect(await screen.findByText("This session was removed")).toBeInTheDocument();
  });

  it("shows a running indicator with elapsed time, and Stop calls stop_turn", async () => {
    const started = new Date(Date.now() - 65_000).toISOString();
    const running = { ...session, running: true, role: "backend-engineer" };
    const backend = fakeBackend({
      get_session: () => running,
      get_transcript: () => [
        makeEntry(1, {
          kind: "system",
          role: "frontend-engineer",
          text: "**Frontend Engineer** takes the turn in `@shop/cart`.",
          createdAt: started,
        }),
      ],
      stop_turn: (args) => ({ ...session, id: args.sessionId, running: false }),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const bar = await screen.findByTestId("running");
    expect(bar).toHaveTextContent("Frontend Engineer is working");
    expect(within(bar).getByTestId("elapsed").textContent).toMatch(/^1:0\d$/);
    fireEvent.click(screen.getByTestId("stop-turn"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("stop_turn", { sessionId: "s1" }));
    await waitFor(() => expect(screen.queryByTestId("running")).not.toBeInTheDocument());
  });

  it("shows the approval card and approves a module's specification", async () => {
    const awaiting = { ...session, state: "awaiting-approval" as const };
    const backend = fakeBackend({
      get_session: () => awaiting,
      get_transcript: () => [
        makeEntry(1, {
          kind: "system",
          module: "@shop/coupons",
          text: "Waiting for your approval: a new module. Read the specification of `@shop/coupons` and approve it to go on.",
        }),
      ],
      approve_spec: () => ({ ...session, state: "editing" }),
      get_settings: () => makeSettings(),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const card = await screen.findByTestId("approval-card");
    const buttons = within(card).getAllByTestId("approve");
    expect(buttons).toHaveLength(2);
    // The module the system entry names waits, and comes first.
    expect(card.querySelector("[data-module]")).toHaveAttribute("data-module", "@shop/coupons");
    fireEvent.click(buttons[0]);
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("approve_spec", { sessionId: "s1", moduleId: "@shop/coupons" }),
    );
    await waitFor(() => expect(screen.queryByTestId("approval-card")).not.toBeInTheDocument());
  });

  it("shows the waiting module's specification in the approval card, fetched again when the transcript grows", async () => {
    const awaiting = { ...session, state: "awaiting-approval" as const };
    let text = "---\nstatus: draft\n---\n# Coupons\n\nOne coupon per cart.\n";
    const backend = fakeBackend({
      get_session: () => awaiting,
      get_transcript: () => [
        makeEntry(1, {
          kind: "system",
          module: "@shop/coupons",
          text: "Waiting for your approval: read the specification of `@shop/coupons`.",
        }),
      ],
      get_spec: (args) => ({
        moduleId: args.moduleId,
        path: "modules/coupons/SPEC.md",
        text,
        status: "draft",
        approved: false,
      }),
      get_settings: () => makeSettings(),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const card = await screen.findByTestId("approval-card");
    const panel = await within(card).findByTestId("spec-panel");
    expect(backend.call).toHaveBeenCalledWith("get_spec", { sessionId: "s1", moduleId: "@shop/coupons" });
    expect(await within(panel).findByRole("heading", { name: "Coupons" })).toBeInTheDocument();
    expect(within(panel).getByTestId("spec-status")).toHaveTextContent("draft · not approved");
    // Above the approve buttons.
    const firstApprove = within(card).getAllByTestId("approve")[0];
    expect(panel.compareDocumentPosition(firstApprove) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();

    text = "---\nstatus: draft\n---\n# Coupons\n\nTwo coupons per cart.\n";
    act(() => {
      backend.emit({
        id: 30,
        at: "2025-01-01T10:20:00Z",
        body: { type: "transcript", entry: makeEntry(2, { kind: "agent", text: "I changed the spec" }) },
      });
    });
    await waitFor(() => expect(within(panel).getByTestId("spec-body")).toHaveTextContent("Two coupons per cart."));
  });

  it("shows the empty state in the approval card for a module without a specification", async () => {
    const backend = fakeBackend({
      get_session: () => ({ ...session, state: "awaiting-approval" as const }),
      get_transcript: () => [],
      get_spec: (args) => ({
        moduleId: args.moduleId,
        path: "modules/cart/SPEC.md",
        text: null,
        status: null,
        approved: false,
      }),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    const card = await screen.findByTestId("approval-card");
    expect(await within(card).findByTestId("spec-empty")).toHaveTextContent("No specification yet");
    expect(within(card).getByTestId("spec-panel")).toHaveAttribute("data-module", "@shop/cart");
  });

  it("Request changes focuses the composer with the business manager picked", async () => {
    const backend = fakeBackend({
      get_session: () => ({ ...session, state: "awaiting-approval" as const }),
      get_transcript: () => [],
      approve_spec: () => {
        throw { code: "SPEC_MISSING", message: "@shop/cart has no SPEC.md yet" };
      },
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    const card = await screen.findByTestId("approval-card");

    fireEvent.click(within(card).getAllByTestId("approve")[0]);
    expect(await within(card).findByTestId("error")).toHaveTextContent("SPEC_MISSING");

    fireEvent.click(within(card).getByTestId("request-changes"));
    await waitFor(() => expect(screen.getByTestId("message")).toHaveFocus());
    expect(screen.getByTestId("role-picker")).toHaveValue("business-manager");
  });

  it("opens a module's specification from the sidebar in a dialog that Esc closes", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [],
      get_spec: (args) => ({
        moduleId: args.moduleId,
        path: "modules/coupons/SPEC.md",
        text: "---\nstatus: approved\n---\n# Coupons\n",
        status: "approved",
        approved: true,
      }),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const modules = await screen.findByTestId("session-modules");
    const buttons = within(modules).getAllByTestId("open-spec");
    expect(buttons).toHaveLength(2);
    buttons[1].focus();
    fireEvent.click(buttons[1]);

    const dialog = screen.getByRole("dialog", { name: "Specification of @shop/coupons" });
    expect(await within(dialog).findByRole("heading", { name: "Coupons" })).toBeInTheDocument();
    expect(backend.call).toHaveBeenCalledWith("get_spec", { sessionId: "s1", moduleId: "@shop/coupons" });
    expect(within(dialog).getByTestId("spec-status")).toHaveTextContent("approved");
    expect(within(dialog).getByTestId("edit-spec")).toBeInTheDocument();

    fireEvent.keyDown(within(dialog).getByTestId("edit-spec"), { key: "Escape" });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(buttons[1]).toHaveFocus();
  });

  it("shows usage totals and the per-role breakdown in the sidebar", async () => {
    const usage = {
      total: makeTotals({ turns: 3, inputTokens: 12_000, outputTokens: 3_400, costUsd: 0.0123, unknownCostTurns: 1 }),
      byRole: [
        {
          role: "business-manager",
          usage: makeTotals({ turns: 2, inputTokens: 8_000, outputTokens: 2_000, costUsd: 0.0123 }),
        },
        {
          role: "backend-engineer",
          usage: makeTotals({ turns: 1, inputTokens: 4_000, outputTokens: 1_400, costUsd: null, unknownCostTurns: 1 }),
        },
      ],
    };
    const backend = fakeBackend({ get_session: () => ({ ...session, usage }), get_transcript: () => [] });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const panel = await screen.findByTestId("usage");
    expect(within(panel).getByTestId("usage-cost")).toHaveTextContent("$0.0123 + unknown");
    expect(panel).toHaveTextContent("12k / 3.4k");
    const rows = within(within(panel).getByTestId("usage-roles")).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("Business Manager");
    expect(rows[1]).toHaveTextContent("$0.0123");
    expect(rows[2]).toHaveTextContent("Backend Engineer");
    expect(rows[2]).toHaveTextContent("unknown");
    expect(rows[2]).not.toHaveTextContent("$0");
  });

  it("toggles auto-continue with update_session and shows the engine's answer", async () => {
    const backend = fakeBackend({
      get_session: () => ({ ...session, autoContinue: true }),
      get_transcript: () => [],
      update_session: (args) => ({ ...session, autoContinue: args.autoContinue ?? true }),
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);

    const toggle = await screen.findByTestId("auto-continue");
    expect(toggle).toBe(screen.getByLabelText("Auto-continue handoffs"));
    expect(toggle).toBeChecked();
    fireEvent.click(toggle);
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_session", { sessionId: "s1", autoContinue: false }),
    );
    await waitFor(() => expect(screen.getByTestId("auto-continue")).not.toBeChecked());
    await waitFor(() => expect(screen.getByTestId("auto-continue")).toBeEnabled());

    fireEvent.click(screen.getByTestId("auto-continue"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_session", { sessionId: "s1", autoContinue: true }),
    );
    await waitFor(() => expect(screen.getByTestId("auto-continue")).toBeChecked());
  });

  it("puts auto-continue back and shows the error when update_session fails", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [],
      update_session: () => {
        throw { code: "SESSION_NOT_FOUND", message: "No session s1" };
      },
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    fireEvent.click(await screen.findByTestId("auto-continue"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_session", { sessionId: "s1", autoContinue: true }),
    );
    expect(await screen.findByTestId("error")).toHaveTextContent("SESSION_NOT_FOUND");
    expect(screen.getByTestId("auto-continue")).not.toBeChecked();
  });

  it("shows each module's review state and links Eject to the delivery screen", async () => {
    const reviewed = {
      ...session,
      reviews: [
        {
          moduleId: "@shop/cart",
          passed: true,
          stale: true,
          summary: "ok",
          report: "",
          createdAt: "2025-01-01T11:00:00Z",
        },
        {
          moduleId: "@shop/coupons",
          passed: false,
          stale: false,
          summary: "no tests for expiry",
          report: "",
          createdAt: "2025-01-01T11:00:00Z",
        },
      ],
    };
    const backend = fakeBackend({ get_session: () => reviewed, get_transcript: () => entries });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findByRole("heading", { name: "Add coupons" });
    const states = screen.getAllByTestId("review-state");
    expect(states.map((s) => [s.dataset.module, s.dataset.review])).toEqual([
      ["@shop/cart", "stale"],
      ["@shop/coupons", "changes"],
    ]);
    expect(states[1]).toHaveTextContent("changes requested");
    expect(states[1]).toHaveAttribute("title", "no tests for expiry");
    expect(screen.getByTestId("eject")).toHaveAttribute("href", "#/session/s1/deliver");

    act(() =>
      backend.emit({
        id: 20,
        at: "",
        body: {
          type: "session",
          session: {
            ...reviewed,
            reviews: [{ ...reviewed.reviews[0], stale: false }],
            updatedAt: "2025-01-01T12:00:00Z",
          },
        },
      }),
    );
    await waitFor(() =>
      expect(screen.getAllByTestId("review-state").map((s) => s.dataset.review)).toEqual(["passed", "missing"]),
    );
  });
});

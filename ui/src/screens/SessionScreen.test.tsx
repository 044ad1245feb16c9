// Tests for the session view: modules, transcript entries by kind, live events for this session only.
import { act, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { fakeBackend, makeEntry, makeSession } from "../test/fixtures";
import { renderWithStore } from "../test/render";
import { SessionScreen } from "./SessionScreen";

const session = makeSession({
  title: "Add coupons",
  state: "editing",
  setup: "passed",
  modules: [
    { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
    { id: "@shop/coupons", directory: "modules/coupons", kind: "new", joinedAt: "2025-01-01T10:01:00Z", baseSequence: 2 },
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
    expect(backend.call).toHaveBeenCalledWith("get_transcript", { sessionId: "s1" });

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
      backend.emit({ id: 10, at, body: { type: "transcript", entry: makeEntry(4, { kind: "tool", text: "ran `npm test`" }) } });
      backend.emit({ id: 10, at, body: { type: "transcript", entry: makeEntry(4, { kind: "tool", text: "ran `npm test`" }) } });
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
});

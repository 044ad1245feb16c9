// Tests for restoring checkpoints: "Restore to here" on linked transcript entries, the sidebar list, the inline confirm, running and errors.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { SessionView } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { fakeBackend, makeCheckpoint, makeEntry, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { CheckpointList } from "./CheckpointList";
import { checkpointsByEntry } from "../chat/EntryCheckpoint";

const entries = [
  makeEntry(1, { kind: "system", text: "Planner: **edit** of `@shop/cart`" }),
  makeEntry(2, { kind: "agent", role: "backend-engineer", text: "Adding coupons" }),
  makeEntry(3, {
    kind: "handoff",
    role: "backend-engineer",
    text: "**backend-engineer → frontend-engineer**: API ready",
  }),
  makeEntry(4, { kind: "agent", role: "frontend-engineer", text: "Wiring the form" }),
  makeEntry(5, { kind: "system", text: "Stopped the Frontend Engineer." }),
];

const checkpoints = [
  makeCheckpoint(0),
  makeCheckpoint(1, { label: "Backend Engineer in @shop/cart", entryId: 3 }),
  makeCheckpoint(2, { label: "Frontend Engineer in @shop/cart", entryId: 5, role: "frontend-engineer" }),
];

const session = makeSession({ state: "review", checkpoints });

function setup(s: SessionView = session, restore?: (sequence: number) => SessionView) {
  const backend = fakeBackend({
    get_session: () => s,
    get_transcript: () => entries,
    restore_checkpoint: (args) => (restore ? restore(args.sequence) : { ...s, state: "editing" }),
  });
  renderWithStore(<SessionScreen sessionId="s1" />, backend);
  return backend;
}

describe("checkpointsByEntry", () => {
  it("maps linked entries to their checkpoint, the latest when two share one", () => {
    const map = checkpointsByEntry([
      makeCheckpoint(0),
      makeCheckpoint(1, { entryId: 7 }),
      makeCheckpoint(2, { entryId: 7 }),
      makeCheckpoint(3, { entryId: 9 }),
    ]);
    expect([...map.entries()].map(([id, cp]) => [id, cp.sequence])).toEqual([
      [7, 2],
      [9, 3],
    ]);
  });
});

describe("Restore to here", () => {
  it("appears only under entries a checkpoint links to", async () => {
    setup();
    const rendered = await within(await screen.findByTestId("transcript")).findAllByTestId("entry");
    expect(rendered).toHaveLength(5);
    const buttons = within(screen.getByTestId("transcript")).getAllByTestId("restore-here");
    expect(buttons.map((b) => b.getAttribute("data-sequence"))).toEqual(["1", "2"]);
    // Each sits in the list item of its entry.
    expect(buttons[0].closest("li")).toContainElement(rendered[2]);
    expect(buttons[1].closest("li")).toContainElement(rendered[4]);
    for (const b of buttons) expect(b).toHaveTextContent("Restore to here");
  });

  it("asks first, and Confirm calls restore_checkpoint with the checkpoint's sequence", async () => {
    const backend = setup();
    const [first] = await screen.findAllByTestId("restore-here");
    fireEvent.click(first);
    const confirm = screen.getByTestId("restore-confirm");
    expect(confirm).toHaveTextContent(
      "Restore the working copy to the state after Backend Engineer in @shop/cart? Later changes stay in their checkpoints.",
    );
    expect(within(confirm).getByTestId("cancel-restore")).toHaveFocus();
    expect(backend.call).not.toHaveBeenCalledWith("restore_checkpoint", expect.anything());

    fireEvent.click(within(confirm).getByTestId("confirm-restore"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("restore_checkpoint", { sessionId: "s1", sequence: 1 }),
    );
    await waitFor(() => expect(screen.queryByTestId("restore-confirm")).not.toBeInTheDocument());
    // The engine's answer is the session now.
    expect(screen.getByTestId("state-badge")).toHaveTextContent("Editing");
  });

  it("Cancel closes the confirm without restoring", async () => {
    const backend = setup();
    const [, second] = await screen.findAllByTestId("restore-here");
    fireEvent.click(second);
    expect(screen.getByTestId("restore-confirm")).toHaveTextContent("state after Frontend Engineer in @shop/cart?");
    fireEvent.click(screen.getByTestId("cancel-restore"));
    expect(screen.queryByTestId("restore-confirm")).not.toBeInTheDocument();
    expect(screen.getAllByTestId("restore-here")[1]).toHaveFocus();
    expect(backend.call).not.toHaveBeenCalledWith("restore_checkpoint", expect.anything());
  });

  it("is disabled while the session runs", async () => {
    setup({ ...session, running: true });
    const buttons = await screen.findAllByTestId("restore-here");
    for (const b of buttons) expect(b).toBeDisabled();
    for (const b of within(screen.getByTestId("checkpoints")).getAllByTestId("restore-checkpoint"))
      expect(b).toBeDisabled();
  });

  it("shows the engine's refusal inline with its code", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => entries,
      restore_checkpoint: () => {
        throw { code: "SESSION_RUNNING", message: "session s1 is running; restore when it stops" };
      },
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    const [first] = await screen.findAllByTestId("restore-here");
    fireEvent.click(first);
    fireEvent.click(screen.getByTestId("confirm-restore"));
    const error = await screen.findByTestId("restore-error");
    expect(error).toHaveTextContent("session s1 is running; restore when it stops");
    expect(error).toHaveTextContent("SESSION_RUNNING");
    // Under the button it came from.
    expect(screen.getAllByTestId("restore-here")[0].closest(".entry-checkpoint")).toContainElement(error);
    expect(screen.queryByTestId("restore-confirm")).not.toBeInTheDocument();
  });
});

describe("Checkpoints in the sidebar", () => {
  it("lists every checkpoint with its sequence, label and time", async () => {
    setup();
    const list = await screen.findByTestId("checkpoints");
    const rows = within(list).getAllByTestId("checkpoint");
    expect(rows.map((r) => r.getAttribute("data-sequence"))).toEqual(["0", "1", "2"]);
    expect(rows[0]).toHaveTextContent("#0");
    expect(rows[0]).toHaveTextContent("The starting point");
    expect(rows[2]).toHaveTextContent("#2");
    expect(rows[2]).toHaveTextContent("Frontend Engineer in @shop/cart");
    expect(rows[1].querySelector("time")).toHaveAttribute("datetime", "2025-01-01T10:05:00Z");
    expect(within(list).getAllByTestId("restore-checkpoint")).toHaveLength(3);
  });

  it("restores the starting point after the same confirm", async () => {
    const backend = setup();
    const list = await screen.findByTestId("checkpoints");
    fireEvent.click(within(list).getAllByTestId("restore-checkpoint")[0]);
    const confirm = within(list).getByTestId("restore-confirm");
    expect(confirm).toHaveTextContent(
      "Restore the working copy to the state after the starting point? Later changes stay in their checkpoints.",
    );
    fireEvent.click(within(confirm).getByTestId("confirm-restore"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("restore_checkpoint", { sessionId: "s1", sequence: 0 }),
    );
  });

  it("names checkpoints by the message that led to them, never two alike, and marks the current one", async () => {
    const talk = [
      makeEntry(1, { kind: "user", text: "Add a coupon field" }),
      makeEntry(2, { kind: "agent", text: "Added" }),
      makeEntry(3, { kind: "user", text: "Add a coupon field" }),
      makeEntry(4, { kind: "agent", text: "Added again" }),
      makeEntry(5, {
        kind: "system",
        text: "Restored the workspace to the state after Backend Engineer in @shop/cart (turn 1).",
      }),
    ];
    const same = makeSession({
      state: "editing",
      checkpoints: [
        makeCheckpoint(0),
        makeCheckpoint(1, { label: "Backend Engineer in @shop/cart", entryId: 2 }),
        makeCheckpoint(2, { label: "Backend Engineer in @shop/cart", entryId: 4 }),
      ],
    });
    const backend = fakeBackend();
    renderWithStore(<CheckpointList session={same} entries={talk} />, backend);
    const rows = screen.getAllByTestId("checkpoint");
    const names = rows.map((r) => within(r).getByTestId("checkpoint-name").textContent);
    expect(names).toEqual(["The starting point", "“Add a coupon field”", "“Add a coupon field” (2)"]);
    // The restore went back to checkpoint 1: that is where the files are.
    expect(rows.map((r) => r.getAttribute("data-current"))).toEqual([null, "true", null]);
    expect(within(rows[1]).getByTestId("checkpoint-current")).toHaveTextContent("current");
    expect(rows[1]).toHaveAttribute("aria-current", "step");
    fireEvent.click(within(rows[2]).getByTestId("restore-checkpoint"));
    expect(within(rows[2]).getByTestId("restore-confirm")).toHaveTextContent("state after “Add a coupon field” (2)?");
  });

  it("says when there are none, and offers no restore in a closed session", () => {
    const backend = fakeBackend();
    const empty = renderWithStore(<CheckpointList session={makeSession()} />, backend);
    expect(screen.getByTestId("checkpoints")).toHaveTextContent("No checkpoints yet.");
    empty.unmount();
    renderWithStore(<CheckpointList session={makeSession({ checkpoints: [makeCheckpoint(0)] })} closed />, backend);
    expect(screen.getByTestId("restore-checkpoint")).toBeDisabled();
  });
});

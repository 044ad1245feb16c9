// Tests for review comments in the Changes tab: lines picked in the diff (click, Shift+click, drag, keyboard), a comment
// written on them (add_review_comment with the range), comments under their lines and in the list with their states, and
// "Send to agent (N)" (send_review), refused while a turn runs.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DiffView, ReviewCommentView } from "../../api/types";
import { fakeBackend, makeFileDiff, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { CommentForm } from "./CommentForm";
import { DiffPanel, type ReviewProps } from "./DiffPanel";

const PATH = "modules/cart/src/cart.ts";

const diff: DiffView = {
  modules: [
    {
      moduleId: "@shop/cart",
      directory: "modules/cart",
      group: "module",
      baseSequence: 0,
      files: [makeFileDiff(PATH)],
    },
  ],
};

function comment(overrides: Partial<ReviewCommentView>): ReviewCommentView {
  return {
    id: "c1",
    path: PATH,
    startLine: 1,
    endLine: 2,
    quote: "const a = 1;\nconst b = 3;",
    body: "Name these better",
    state: "open",
    turnId: null,
    note: null,
    createdAt: "2025-01-01T10:00:00Z",
    updatedAt: "2025-01-01T10:00:00Z",
    ...overrides,
  };
}

function renderPanel(review: ReviewProps, handlers = {}) {
  const backend = fakeBackend({
    get_diff: () => diff,
    add_review_comment: () => makeSession({ reviewComments: [comment({})] }),
    send_review: () => makeSession({ running: true }),
    resolve_review_comment: () => makeSession(),
    ...handlers,
  });
  renderWithStore(<DiffPanel sessionId="s1" modules={[]} review={review} />, backend);
  return backend;
}

const lineButton = (line: number) =>
  screen.getAllByTestId("diff-line-pick").find((b) => b.getAttribute("data-line") === String(line))!;

const pressed = () =>
  screen
    .getAllByTestId("diff-line-pick")
    .filter((b) => b.getAttribute("aria-pressed") === "true")
    .map((b) => Number(b.getAttribute("data-line")));

describe("review comments in the diff", () => {
  it("selects a line, extends with Shift, and sends the comment with the range", async () => {
    const backend = renderPanel({ comments: [], running: false, closed: false });
    await screen.findAllByTestId("diff-line-pick");
    // Only the new side's lines are buttons: 1, 2 (added), 3; the removed line has none.
    expect(screen.getAllByTestId("diff-line-pick").map((b) => b.getAttribute("data-line"))).toEqual(["1", "2", "3"]);

    fireEvent.click(lineButton(1));
    expect(pressed()).toEqual([1]);
    fireEvent.click(lineButton(3), { shiftKey: true });
    expect(pressed()).toEqual([1, 2, 3]);
    const form = screen.getByTestId("comment-form");
    expect(form).toHaveTextContent("Comment on lines 1–3");
    expect(screen.getByTestId("comment-save")).toBeDisabled();

    fireEvent.change(within(form).getByTestId("comment-input"), { target: { value: "  Use the cart's own total  " } });
    fireEvent.click(screen.getByTestId("comment-save"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("add_review_comment", {
        sessionId: "s1",
        path: PATH,
        startLine: 1,
        endLine: 3,
        body: "Use the cart's own total",
      }),
    );
    // Saved: the selection and the form are gone.
    await waitFor(() => expect(screen.queryByTestId("comment-form")).not.toBeInTheDocument());
    expect(pressed()).toEqual([]);
  });

  it("selects a range by dragging, and clears a lone line picked again", async () => {
    renderPanel({ comments: [], running: false, closed: false });
    await screen.findAllByTestId("diff-line-pick");
    fireEvent.mouseDown(lineButton(3), { button: 0 });
    fireEvent.mouseEnter(lineButton(2), { buttons: 1 });
    expect(pressed()).toEqual([2, 3]);
    fireEvent.mouseUp(window);
    // Moving over lines after the button is released extends nothing.
    fireEvent.mouseEnter(lineButton(1), { buttons: 0 });
    expect(pressed()).toEqual([2, 3]);
    fireEvent.click(lineButton(1));
    fireEvent.click(lineButton(1));
    expect(pressed()).toEqual([]);
    expect(screen.queryByTestId("comment-form")).not.toBeInTheDocument();
  });

  it("shows comments under their lines and in the list, with their states, and sends the open ones", async () => {
    const comments = [
      comment({}),
      comment({ id: "c2", startLine: 3, endLine: 3, body: "Export the total", state: "addressed", turnId: 4 }),
      comment({ id: "c3", startLine: 3, endLine: 3, body: "Old remark", state: "resolved" }),
      comment({
        id: "c4",
        path: "modules/cart/README.md",
        startLine: 9,
        endLine: 9,
        body: "Document it",
        note: "The turn it was sent with did not change its lines.",
      }),
    ];
    const backend = renderPanel({ comments, running: false, closed: false });
    const viewer = await screen.findByTestId("file-diff");
    // Under their lines, in this file only.
    const inDiff = within(viewer)
      .getAllByTestId("review-comment-body")
      .map((b) => b.textContent);
    expect(inDiff).toEqual(["Name these better", "Export the total", "Old remark"]);
    expect(lineButton(1)).toHaveAttribute("data-commented", "true");
    expect(lineButton(3)).toHaveAttribute("data-commented", "true");

    const list = screen.getByTestId("review-comments");
    const states = within(list)
      .getAllByTestId("review-comment-state")
      .map((s) => s.textContent);
    expect(states).toEqual(["open", "addressed?", "resolved", "open"]);
    expect(within(list).getByTestId("review-comment-note")).toHaveTextContent("did not change its lines");

    const send = screen.getByTestId("send-review");
    expect(send).toHaveTextContent("Send to agent (2)");
    fireEvent.click(send);
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("send_review", { sessionId: "s1" }));

    const addressed = within(list).getAllByTestId("review-comment")[1];
    fireEvent.click(within(addressed).getByTestId("review-comment-resolve"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("resolve_review_comment", {
        sessionId: "s1",
        commentId: "c2",
        resolved: true,
      }),
    );
  });

  it("sends nothing while a turn runs, and a sent comment offers no change", async () => {
    renderPanel({ comments: [comment({}), comment({ id: "c2", state: "sent" })], running: true, closed: false });
    await screen.findByTestId("file-diff");
    expect(screen.getByTestId("send-review")).toBeDisabled();
    const sent = screen.getAllByTestId("review-comment").find((c) => c.getAttribute("data-state") === "sent")!;
    expect(within(sent).queryByTestId("review-comment-delete")).not.toBeInTheDocument();
  });
});

describe("CommentForm", () => {
  it("saves with Ctrl+Enter and cancels with Escape", () => {
    const saved: string[] = [];
    let cancelled = 0;
    render(
      <CommentForm label="line 2" saving={false} onSave={(b) => saved.push(b)} onCancel={() => (cancelled += 1)} />,
    );
    const input = screen.getByTestId("comment-input");
    fireEvent.keyDown(input, { key: "Enter", ctrlKey: true });
    expect(saved).toEqual([]);
    fireEvent.change(input, { target: { value: "Fix it" } });
    fireEvent.keyDown(input, { key: "Enter", ctrlKey: true });
    expect(saved).toEqual(["Fix it"]);
    fireEvent.keyDown(input, { key: "Escape" });
    expect(cancelled).toBe(1);
  });
});

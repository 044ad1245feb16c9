// Tests for the permission card: what it shows of the request, one button per option styled by its kind, the answer it sends, the error it says, and the card at the end of the chat counting as new activity.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { KilnError } from "../../api/backend";
import type { PermissionCard as PermissionCardView } from "../../api/types";
import { fakeBackend, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { PermissionCard } from "./PermissionCard";
import { TranscriptView } from "./TranscriptView";

const card: PermissionCardView = {
  id: "req-1",
  title: "Fetch https://example.com/docs",
  kind: "fetch",
  locations: ["docs/notes.md"],
  why: "The command policy does not decide fetches.",
  options: [
    { id: "allow-once", name: "Allow once", kind: "allow_once" },
    { id: "allow-always", name: "Always allow", kind: "allow_always" },
    { id: "reject-once", name: "Reject", kind: "reject_once" },
  ],
  askedAt: "2025-01-01T10:00:00Z",
};

describe("PermissionCard", () => {
  it("shows the request, why Kiln asks, and one button per option, allows apart from refusals", () => {
    renderWithStore(<PermissionCard sessionId="s1" card={card} />, fakeBackend());
    const shown = screen.getByTestId("permission-card");
    expect(within(shown).getByTestId("permission-title")).toHaveTextContent("Fetch https://example.com/docs");
    expect(within(shown).getByTestId("permission-kind")).toHaveTextContent("fetch");
    expect(within(shown).getByText("docs/notes.md")).toBeInTheDocument();
    expect(within(shown).getByText("The command policy does not decide fetches.")).toBeInTheDocument();
    const options = within(shown).getAllByTestId("permission-option");
    expect(options.map((o) => [o.getAttribute("data-option-id"), o.textContent])).toEqual([
      ["allow-once", "Allow once"],
      ["allow-always", "Always allow"],
      ["reject-once", "Reject"],
    ]);
    expect(options[0]).toHaveClass("btn-primary");
    expect(options[2]).toHaveClass("btn-danger-ghost");
    expect(options[2]).not.toHaveClass("btn-primary");
    // Buttons: reachable from the keyboard.
    for (const o of options) expect(o.tagName).toBe("BUTTON");
  });

  it("answers with the session, request and option ids", async () => {
    const backend = fakeBackend({ answer_permission: () => makeSession() });
    renderWithStore(<PermissionCard sessionId="s1" card={card} />, backend);
    fireEvent.click(screen.getByRole("button", { name: "Reject" }));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("answer_permission", {
        sessionId: "s1",
        requestId: "req-1",
        optionId: "reject-once",
      }),
    );
    expect(screen.queryByTestId("permission-error")).not.toBeInTheDocument();
  });

  it("says a refusal in words and lets the operator try again", async () => {
    const backend = fakeBackend({
      answer_permission: () => {
        throw new KilnError("PERMISSION_NOT_FOUND", "no permission request `req-1` waits in this session");
      },
    });
    renderWithStore(<PermissionCard sessionId="s1" card={card} />, backend);
    fireEvent.click(screen.getByRole("button", { name: "Allow once" }));
    const error = await screen.findByTestId("permission-error");
    expect(error).toHaveAttribute("data-code", "PERMISSION_NOT_FOUND");
    expect(error).toHaveTextContent("no permission request req-1 waits in this session");
    expect(error).toHaveTextContent("That request is no longer waiting");
    expect(screen.getByRole("button", { name: "Allow once" })).toBeEnabled();
  });
});

describe("TranscriptView with a permission card", () => {
  const entries = [
    {
      id: 1,
      sessionId: "s1",
      kind: "system" as const,
      module: null,
      role: null,
      text: "The agent asks permission for **fetch** `Fetch https://example.com/docs`: answer in the card.",
      createdAt: "2025-01-01T10:00:00Z",
    },
  ];

  it("shows the waiting cards after the last entry", () => {
    renderWithStore(<TranscriptView entries={entries} permissions={[card]} />, fakeBackend());
    const content = screen.getByTestId("transcript");
    const shown = within(content).getByTestId("permission-card");
    const asked = within(content).getByText(/answer in the card/);
    expect(asked.compareDocumentPosition(shown) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("counts a new card as new activity when the reader scrolled up", async () => {
    let show: (cards: PermissionCardView[]) => void = () => {};
    function Chat() {
      const [cards, setCards] = useState<PermissionCardView[]>([]);
      show = setCards;
      return <TranscriptView entries={entries} permissions={cards} />;
    }
    renderWithStore(<Chat />, fakeBackend());
    const log = screen.getByTestId("transcript");
    // jsdom lays nothing out: a tall log scrolled to its top.
    Object.defineProperty(log, "scrollHeight", { configurable: true, value: 1000 });
    Object.defineProperty(log, "clientHeight", { configurable: true, value: 200 });
    log.scrollTop = 500;
    fireEvent.scroll(log);
    log.scrollTop = 0;
    fireEvent.scroll(log);
    expect(screen.queryByTestId("new-activity")).not.toBeInTheDocument();
    act(() => show([card]));
    expect(await screen.findByTestId("new-activity")).toBeInTheDocument();
  });
});

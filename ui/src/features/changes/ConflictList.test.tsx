// Tests for the conflicts of a file: each conflict shows both sides; a pick sends resolve_conflict with that conflict's
// id and side, and the answer replaces the list; a refusal shows in words; nothing is picked while a turn runs.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { KilnError } from "../../api/backend";
import type { ConflictsView } from "../../api/types";
import { fakeBackend } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { ConflictList } from "./ConflictList";

const TWO: ConflictsView = {
  files: [
    {
      path: "greet.js",
      conflicts: [
        { id: "c1", line: 1, session: "const a = 10;\n", workspace: "const a = 100;\n", base: null },
        { id: "c2", line: 12, session: "", workspace: "const e = 500;\n", base: null },
      ],
    },
  ],
};
const ONE: ConflictsView = { files: [{ path: "greet.js", conflicts: [TWO.files[0].conflicts[1]] }] };

function list(locked = false, onResolved = () => {}) {
  return (
    <ConflictList
      sessionId="s1"
      path="greet.js"
      paths={["greet.js"]}
      locked={locked}
      refresh={0}
      onResolved={onResolved}
    />
  );
}

describe("conflicts of a file", () => {
  it("shows both sides of each conflict, and an empty side in words", async () => {
    renderWithStore(list(), fakeBackend({ get_conflicts: () => TWO }));
    const cards = await screen.findAllByTestId("conflict");
    expect(cards).toHaveLength(2);
    expect(cards[0]).toHaveTextContent("Conflict 1 of 2 at line 1");
    expect(within(cards[0]).getByTestId("conflict-session")).toHaveTextContent("const a = 10;");
    expect(within(cards[0]).getByTestId("conflict-workspace")).toHaveTextContent("const a = 100;");
    expect(within(cards[1]).getByTestId("conflict-session")).toHaveTextContent("No lines: this side removed them");
  });

  it("sends the pick for that conflict and shows what is left", async () => {
    const onResolved = vi.fn();
    const backend = fakeBackend({ get_conflicts: () => TWO, resolve_conflict: () => ONE });
    renderWithStore(list(false, onResolved), backend);
    const cards = await screen.findAllByTestId("conflict");
    fireEvent.click(within(cards[0]).getByTestId("keep-workspace"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("resolve_conflict", {
        sessionId: "s1",
        path: "greet.js",
        conflictId: "c1",
        keep: "workspace",
      }),
    );
    await waitFor(() => expect(screen.getAllByTestId("conflict")).toHaveLength(1));
    expect(screen.getByTestId("conflict")).toHaveTextContent("at line 12");
    expect(onResolved).toHaveBeenCalled();
  });

  it("says so when the conflict changed since it was shown", async () => {
    const backend = fakeBackend({
      get_conflicts: () => TWO,
      resolve_conflict: () => {
        throw new KilnError("CONFLICT_NOT_FOUND", "that conflict in `greet.js` changed since it was shown");
      },
    });
    renderWithStore(list(), backend);
    fireEvent.click((await screen.findAllByTestId("keep-both"))[0]);
    expect(await screen.findByTestId("conflict-error")).toHaveTextContent("changed since it was shown");
  });

  it("offers no pick while a turn runs", async () => {
    renderWithStore(list(true), fakeBackend({ get_conflicts: () => TWO }));
    const cards = await screen.findAllByTestId("conflict");
    for (const id of ["keep-session", "keep-workspace", "keep-both"]) {
      expect(within(cards[0]).getByTestId(id)).toBeDisabled();
    }
  });
});

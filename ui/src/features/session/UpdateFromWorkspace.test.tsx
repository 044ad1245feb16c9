// Tests for update from the workspace: the header button calls update_from_workspace and shows a refusal in words; the conflicts bar lists the files and hands them to the agent with a message naming them and the markers.
import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { KilnError } from "../../api/backend";
import { fakeBackend, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { ConflictsBar, UpdateButton, resolveConflictsMessage } from "./UpdateFromWorkspace";

describe("update from the workspace", () => {
  it("updates from the header, and says why when there is nothing to take in", async () => {
    const session = makeSession({ state: "review" });
    const backend = fakeBackend({
      update_from_workspace: () => {
        throw new KilnError("NOTHING_TO_UPDATE", "the workspace has not changed since the session's base");
      },
    });
    renderWithStore(<UpdateButton session={session} />, backend);
    fireEvent.click(screen.getByTestId("update-from-workspace"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("update_from_workspace", { sessionId: "s1" }));
    expect(await screen.findByTestId("error")).toHaveAttribute("data-code", "NOTHING_TO_UPDATE");
    expect(screen.getByTestId("error")).toHaveTextContent("the workspace has not changed since the session's base");
  });

  it("is not offered again while the last update's conflicts stand", () => {
    renderWithStore(<UpdateButton session={makeSession({ conflicts: ["a.js"] })} />, fakeBackend());
    expect(screen.getByTestId("update-from-workspace")).toBeDisabled();
  });

  it("lists the conflicting files and hands them to the agent", async () => {
    const session = makeSession({ state: "review", conflicts: ["src/a.js", "b.js"] });
    const backend = fakeBackend({ send_message: () => ({ ...session, running: true }) });
    renderWithStore(<ConflictsBar session={session} />, backend);
    expect(screen.getByTestId("conflicts")).toHaveTextContent("2 files have conflicts from the update: src/a.js, b.js");
    fireEvent.click(screen.getByTestId("resolve-conflicts"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "s1",
        text: resolveConflictsMessage(["src/a.js", "b.js"]),
      }),
    );
    expect(resolveConflictsMessage(["src/a.js"])).toMatch(/`src\/a\.js`.*<<<<<<< session.*>>>>>>> workspace/s);
  });

  it("shows nothing without conflicts", () => {
    renderWithStore(<ConflictsBar session={makeSession({})} />, fakeBackend());
    expect(screen.queryByTestId("conflicts")).toBeNull();
  });
});

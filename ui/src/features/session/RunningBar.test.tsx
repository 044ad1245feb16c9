// Tests for the running bar: Stop while planning and during setup (and from Ctrl/⌘+.), Retry on a blocked session, and Retry setup after a failed setup.
import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { keys } from "../../state/queries";
import { emitShortcut } from "../shortcuts/bus";
import { fakeBackend, makePermissionCard, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { RunningBar } from "./RunningBar";

describe("RunningBar", () => {
  it("offers Stop while the session plans, and stops it from the button", async () => {
    const planning = makeSession({ state: "planning", running: true });
    const backend = fakeBackend({ stop_turn: () => ({ ...planning, running: false, state: "editing" }) });
    renderWithStore(<RunningBar session={planning} entries={[]} />, backend);
    expect(screen.getByTestId("running")).toHaveAttribute("data-phase", "planning");
    expect(screen.getByTestId("running")).toHaveTextContent("Planning");
    fireEvent.click(screen.getByTestId("stop-turn"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("stop_turn", { sessionId: "s1" }));
  });

  it("offers Stop while the working copy is set up, and Ctrl/⌘+. stops it", async () => {
    const settingUp = makeSession({ state: "planning", running: false, setup: "running" });
    const backend = fakeBackend({ stop_turn: () => ({ ...settingUp, setup: "failed" }) });
    renderWithStore(<RunningBar session={settingUp} entries={[]} />, backend);
    expect(screen.getByTestId("running")).toHaveAttribute("data-phase", "setup");
    expect(screen.getByTestId("running")).toHaveTextContent("Setting up the working copy");
    act(() => emitShortcut("stop"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("stop_turn", { sessionId: "s1" }));
  });

  it("says the turn waits for the operator while a permission request waits", () => {
    const card = makePermissionCard();
    const asking = makeSession({ state: "running", running: true, role: "backend-engineer", permissions: [card] });
    renderWithStore(<RunningBar session={asking} entries={[]} />, fakeBackend());
    expect(screen.getByTestId("running")).toHaveTextContent("waits for your answer to its permission request");
    expect(screen.getByTestId("stop-turn")).toBeEnabled();
  });

  it("shows nothing for an idle session, and Retry for a blocked one", async () => {
    const idle = makeSession({ state: "review" });
    const { unmount } = renderWithStore(<RunningBar session={idle} entries={[]} />, fakeBackend());
    expect(screen.queryByTestId("running")).toBeNull();
    expect(screen.queryByTestId("blocked")).toBeNull();
    unmount();

    const blocked = makeSession({ state: "blocked" });
    const backend = fakeBackend({ retry_turn: () => ({ ...blocked, state: "running", running: true }) });
    renderWithStore(<RunningBar session={blocked} entries={[]} />, backend);
    expect(screen.queryByTestId("stop-turn")).toBeNull();
    fireEvent.click(screen.getByTestId("retry-turn"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("retry_turn", { sessionId: "s1" }));
  });

  it("offers no Retry on an archived blocked session", () => {
    renderWithStore(
      <RunningBar session={makeSession({ state: "blocked", archivedAt: "2025-01-02T00:00:00Z" })} entries={[]} />,
      fakeBackend(),
    );
    expect(screen.queryByTestId("retry-turn")).toBeNull();
  });

  it("offers Retry setup when the setup failed and nothing runs, and shows the session it returns", async () => {
    const failed = makeSession({ state: "editing", setup: "failed" });
    const backend = fakeBackend({ retry_setup: () => ({ ...failed, setup: "running" }) });
    const { client } = renderWithStore(<RunningBar session={failed} entries={[]} />, backend);
    expect(screen.getByTestId("setup-failed")).toHaveTextContent("Setup failed");
    fireEvent.click(screen.getByTestId("retry-setup"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("retry_setup", { sessionId: "s1" }));
    await waitFor(() => expect(client.getQueryData(keys.session("s1"))).toMatchObject({ setup: "running" }));
  });

  it("offers no Retry setup while the session runs, nor after a setup that passed", () => {
    const { unmount } = renderWithStore(
      <RunningBar session={makeSession({ state: "running", running: true, setup: "failed" })} entries={[]} />,
      fakeBackend(),
    );
    expect(screen.queryByTestId("retry-setup")).toBeNull();
    unmount();
    renderWithStore(
      <RunningBar session={makeSession({ state: "editing", setup: "passed" })} entries={[]} />,
      fakeBackend(),
    );
    expect(screen.queryByTestId("retry-setup")).toBeNull();
  });

  it("shows the engine's refusal of Retry setup", async () => {
    const backend = fakeBackend({
      retry_setup: () => {
        throw { code: "SESSION_RUNNING", message: "retry the setup when the session stops" };
      },
    });
    renderWithStore(<RunningBar session={makeSession({ state: "editing", setup: "failed" })} entries={[]} />, backend);
    fireEvent.click(screen.getByTestId("retry-setup"));
    expect(await screen.findByTestId("error")).toHaveTextContent("retry the setup when the session stops");
  });
});

// Tests for the open-workspace screen: open by path, inline errors, recent list, Browse on desktop only.
import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { appState, fakeBackend, workspace } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { OpenWorkspace } from "./OpenWorkspace";

const noWorkspace = { ...appState, workspace: null };

describe("OpenWorkspace", () => {
  it("shows WORKSPACE_NOT_FOUND inline", async () => {
    const backend = fakeBackend({
      get_state: () => noWorkspace,
      open_workspace: () => {
        throw { code: "WORKSPACE_NOT_FOUND", message: "No such folder: /nope" };
      },
    });
    renderWithStore(<OpenWorkspace />, backend);
    fireEvent.change(screen.getByTestId("workspace-path"), { target: { value: "/nope" } });
    fireEvent.click(screen.getByTestId("open-workspace"));

    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("No such folder: /nope");
    expect(error).toHaveTextContent("WORKSPACE_NOT_FOUND");
    expect(backend.call).toHaveBeenCalledWith("open_workspace", { path: "/nope" });
  });

  it("opens a recent workspace and goes to the dashboard", async () => {
    const backend = fakeBackend({ get_state: () => noWorkspace, open_workspace: () => workspace });
    renderWithStore(<OpenWorkspace />, backend);
    fireEvent.click(await screen.findByRole("button", { name: "/home/dev/blog" }));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("open_workspace", { path: "/home/dev/blog" }));
    await waitFor(() => expect(window.location.hash).toBe("#/"));
  });

  it("offers Browse… only on desktop, and opens the picked folder", async () => {
    const http = fakeBackend({ get_state: () => noWorkspace });
    const { unmount } = renderWithStore(<OpenWorkspace />, http);
    expect(screen.queryByTestId("browse")).not.toBeInTheDocument();
    unmount();

    const desktop = fakeBackend({ get_state: () => noWorkspace, open_workspace: () => workspace }, "tauri");
    renderWithStore(<OpenWorkspace />, desktop);
    fireEvent.click(screen.getByTestId("browse"));
    await waitFor(() => expect(desktop.call).toHaveBeenCalledWith("open_workspace", { path: "/picked/folder" }));
  });
});

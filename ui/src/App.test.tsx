// Tests for the app shell: start-up states and routing between the open-workspace screen and the dashboard.
import { act, fireEvent, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { App } from "./App";
import { appState, fakeBackend, makeSettings, workspace } from "./test/fixtures";
import { renderWithStore } from "./test/render";

describe("App", () => {
  it("shows the open-workspace screen when no workspace is open", async () => {
    renderWithStore(<App />, fakeBackend({ get_state: () => ({ ...appState, workspace: null }) }));
    expect(await screen.findByTestId("workspace-path")).toBeInTheDocument();
    expect(screen.queryByTestId("switch-workspace")).not.toBeInTheDocument();
  });

  it("shows the dashboard, and Switch workspace leads to the open-workspace screen", async () => {
    renderWithStore(<App />, fakeBackend());
    expect(await screen.findByTestId("new-session")).toBeInTheDocument();
    expect(screen.getByTestId("header-workspace")).toHaveTextContent(workspace.root);

    fireEvent.click(screen.getByTestId("switch-workspace"));
    await act(async () => window.dispatchEvent(new HashChangeEvent("hashchange")));
    expect(await screen.findByTestId("workspace-path")).toBeInTheDocument();
    expect(screen.getByTestId("recent-workspaces")).toHaveTextContent("/home/dev/blog");
  });

  it("shows a start-up error with its code", async () => {
    renderWithStore(
      <App />,
      fakeBackend({
        get_state: () => {
          throw { code: "INTERNAL", message: "engine exploded" };
        },
      }),
    );
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("engine exploded");
    expect(error).toHaveTextContent("INTERNAL");
  });

  it("opens the settings screen from the header", async () => {
    renderWithStore(<App />, fakeBackend({ get_settings: () => makeSettings() }));
    fireEvent.click(await screen.findByTestId("settings"));
    await act(async () => window.dispatchEvent(new HashChangeEvent("hashchange")));
    expect(window.location.hash).toBe("#/settings");
    expect(await screen.findByRole("heading", { name: "Settings" })).toBeInTheDocument();
    expect(await screen.findByTestId("driver-list")).toBeInTheDocument();
  });
});

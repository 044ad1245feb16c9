// Tests for the Help page: it describes the desktop app's menus only in the desktop app, and the browser surface in `kiln serve`.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { HelpScreen } from "./HelpScreen";

describe("HelpScreen", () => {
  it("in kiln serve describes the browser: no desktop menus, the server's workspace, updates on the server", () => {
    render(<HelpScreen desktop={false} />);
    const page = screen.getByTestId("help-screen");
    expect(page).toHaveAttribute("data-surface", "browser");
    expect(page).not.toHaveTextContent("File ▸");
    expect(page).not.toHaveTextContent("Open Recent");
    expect(page).not.toHaveTextContent("▸");
    expect(screen.getByTestId("help-workspaces")).toHaveTextContent("kiln serve --workspace DIR");
    expect(screen.getByTestId("help-updates")).toHaveTextContent("updates when the kiln on the server is updated");
    expect(page).toHaveTextContent("Enter sends");
  });

  it("in the desktop app names its menus", () => {
    render(<HelpScreen desktop />);
    expect(screen.getByTestId("help-workspaces")).toHaveTextContent("File ▸ Open Workspace…");
    expect(screen.getByTestId("help-updates")).toHaveTextContent("Help ▸ Check for Updates…");
  });
});

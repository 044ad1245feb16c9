// The desktop's menu actions reach the UI, and the update check runs on start only when the desktop asks for it.
import { act, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { Backend } from "../api/backend";
import { renderWithStore } from "../test/render";
import type { UpdaterDeps } from "../lib/updater";
import { DesktopTouches, type MenuListener } from "./DesktopTouches";

function backend(): Backend {
  return {
    kind: "tauri",
    call: vi.fn(async () => ({
      version: "0.1.0",
      transport: "desktop",
      mode: "loopback",
      workspace: null,
      recentWorkspaces: [],
    })) as Backend["call"],
    subscribe: () => () => {},
    pickFolder: vi.fn(async () => null),
  };
}

function menu(): { listen: MenuListener; click: (id: string) => void } {
  let handler: (id: string) => void = () => {};
  return {
    listen: async (onItem) => {
      handler = onItem;
      return () => {};
    },
    click: (id) => act(() => handler(id)),
  };
}

describe("DesktopTouches", () => {
  it("follows the menu: settings, help, the folder picker and Check for Updates…", async () => {
    const m = menu();
    const b = backend();
    const updater: UpdaterDeps = { check: vi.fn(async () => null), relaunch: async () => {} };
    renderWithStore(<DesktopTouches desktop listenMenu={m.listen} updater={updater} startCheck={false} />, b);
    await waitFor(() => expect(updater.check).not.toHaveBeenCalled());
    m.click("settings");
    expect(window.location.hash).toBe("#/settings");
    m.click("help");
    expect(window.location.hash).toBe("#/help");
    m.click("open-workspace");
    await waitFor(() => expect(b.pickFolder).toHaveBeenCalled());
    m.click("check-updates");
    expect(await screen.findByTestId("update-none")).toBeInTheDocument();
    expect(updater.check).toHaveBeenCalledTimes(1);
  });

  it("checks at start when asked, and never outside the desktop", async () => {
    const updater: UpdaterDeps = { check: vi.fn(async () => null), relaunch: async () => {} };
    const { unmount } = renderWithStore(
      <DesktopTouches desktop listenMenu={menu().listen} updater={updater} startCheck />,
      backend(),
    );
    await waitFor(() => expect(updater.check).toHaveBeenCalledTimes(1));
    expect(screen.queryByRole("dialog")).toBeNull();
    unmount();
    const browser: UpdaterDeps = { check: vi.fn(async () => null), relaunch: async () => {} };
    const listen = vi.fn(menu().listen);
    renderWithStore(<DesktopTouches desktop={false} listenMenu={listen} updater={browser} startCheck />, backend());
    await new Promise((r) => setTimeout(r, 20));
    expect(browser.check).not.toHaveBeenCalled();
    expect(listen).not.toHaveBeenCalled();
  });
});

// The update flow: what's new, download with progress, install and restart; failures and bad signatures in plain words; a quiet start-up check.
import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { AvailableUpdate, UpdaterDeps } from "../../lib/updater";
import { UpdateDialog } from "./UpdateDialog";

function update(install: AvailableUpdate["install"]): AvailableUpdate {
  return { version: "0.2.0", currentVersion: "0.1.0", notes: "## Fixes\n\n- Faster diffs", install };
}

describe("UpdateDialog", () => {
  it("shows what's new, downloads with progress, then restarts", async () => {
    let finish: () => void = () => {};
    let report: (d: number, t: number | null) => void = () => {};
    const install = vi.fn((onProgress: (d: number, t: number | null) => void) => {
      report = onProgress;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const deps: UpdaterDeps = { check: vi.fn(async () => update(install)), relaunch: vi.fn(async () => {}) };
    render(<UpdateDialog deps={deps} quiet={false} onClose={() => {}} />);
    expect(await screen.findByTestId("update-notes")).toHaveTextContent("Faster diffs");
    expect(screen.getByTestId("update-available")).toHaveTextContent("0.2.0");
    await userEvent.click(screen.getByRole("button", { name: "Download and install" }));
    act(() => report(512, 1024));
    const bar = screen.getByRole("progressbar", { name: "Download progress" });
    expect(bar).toHaveAttribute("value", "512");
    expect(bar).toHaveAttribute("max", "1024");
    expect(screen.getByTestId("update-downloading")).toHaveTextContent("50%");
    await act(async () => finish());
    expect(await screen.findByTestId("update-installed")).toHaveTextContent("verified");
    await userEvent.click(screen.getByRole("button", { name: "Restart now" }));
    expect(deps.relaunch).toHaveBeenCalled();
  });

  it("refuses a badly signed update with a clear message", async () => {
    const install = vi.fn(async () => {
      throw new Error("The signature was created with a different key than the one provided");
    });
    const deps: UpdaterDeps = { check: async () => update(install), relaunch: vi.fn(async () => {}) };
    render(<UpdateDialog deps={deps} quiet={false} onClose={() => {}} />);
    await userEvent.click(await screen.findByRole("button", { name: "Download and install" }));
    expect(await screen.findByTestId("update-failed")).toHaveTextContent(/refused: its signature does not match/);
    expect(deps.relaunch).not.toHaveBeenCalled();
  });

  it("says so when up to date or when the check fails, if asked", async () => {
    const { unmount } = render(
      <UpdateDialog deps={{ check: async () => null, relaunch: async () => {} }} quiet={false} onClose={() => {}} />,
    );
    expect(await screen.findByTestId("update-none")).toHaveTextContent("up to date");
    unmount();
    render(
      <UpdateDialog
        deps={{ check: async () => Promise.reject(new Error("offline")), relaunch: async () => {} }}
        quiet={false}
        onClose={() => {}}
      />,
    );
    expect(await screen.findByTestId("update-failed")).toHaveTextContent("Could not check for updates: offline");
  });

  it("stays silent at start unless an update is found", async () => {
    const onClose = vi.fn();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { container } = render(
      <UpdateDialog
        deps={{ check: async () => Promise.reject(new Error("offline")), relaunch: async () => {} }}
        quiet
        onClose={onClose}
      />,
    );
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(container).toBeEmptyDOMElement();
    expect(screen.queryByRole("dialog")).toBeNull();
    warn.mockRestore();
  });
});

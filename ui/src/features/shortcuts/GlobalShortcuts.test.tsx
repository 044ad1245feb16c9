// Tests for the shortcut listener: `?` opens the sheet, N goes to New session, keys typed in a field do nothing, Escape leaves the field, keys in a terminal are the terminal's, the rest reach their panel.
import { act, fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { useShortcut } from "./bus";
import { GlobalShortcuts } from "./GlobalShortcuts";

function Listener({ onAction }: { onAction: (a: string) => void }) {
  useShortcut(["tab-changes", "diff-next", "stop"], onAction);
  return <textarea data-testid="field" />;
}

describe("GlobalShortcuts", () => {
  it("opens the sheet on ?, and closes it with Escape", () => {
    render(<GlobalShortcuts workspace />);
    fireEvent.keyDown(document.body, { key: "?" });
    expect(screen.getByTestId("shortcut-sheet")).toHaveTextContent("Next file");
    fireEvent.keyDown(screen.getByRole("dialog"), { key: "Escape" });
    expect(screen.queryByTestId("shortcut-sheet")).toBeNull();
  });

  it("goes to New session on N, only with a workspace open", () => {
    const { rerender } = render(<GlobalShortcuts workspace={false} />);
    fireEvent.keyDown(document.body, { key: "n" });
    expect(window.location.hash).toBe("");
    rerender(<GlobalShortcuts workspace />);
    fireEvent.keyDown(document.body, { key: "n" });
    expect(window.location.hash).toBe("#/new");
  });

  it("passes keys to the panel that owns them, but not those typed in a field; Escape leaves the field and Mod+. stops from it", () => {
    const onAction = vi.fn();
    render(
      <>
        <GlobalShortcuts workspace />
        <Listener onAction={onAction} />
      </>,
    );
    const field = screen.getByTestId("field");
    act(() => field.focus());
    fireEvent.keyDown(field, { key: "2" });
    fireEvent.keyDown(field, { key: "j" });
    fireEvent.keyDown(field, { key: "?" });
    expect(onAction).not.toHaveBeenCalled();
    expect(screen.queryByTestId("shortcut-sheet")).toBeNull();
    fireEvent.keyDown(field, { key: ".", ctrlKey: true });
    expect(onAction).toHaveBeenLastCalledWith("stop");
    fireEvent.keyDown(field, { key: "Escape" });
    expect(document.activeElement).not.toBe(field);
    fireEvent.keyDown(document.body, { key: "2" });
    expect(onAction).toHaveBeenLastCalledWith("tab-changes");
    fireEvent.keyDown(document.body, { key: "j" });
    expect(onAction).toHaveBeenLastCalledWith("diff-next");
  });
  it("leaves every key typed in a terminal to the terminal, Escape and Mod+. included", () => {
    const onAction = vi.fn();
    render(
      <>
        <GlobalShortcuts workspace />
        <Listener onAction={onAction} />
        <div className="xterm">
          <textarea data-testid="terminal-input" />
        </div>
      </>,
    );
    const input = screen.getByTestId("terminal-input");
    act(() => input.focus());
    for (const key of ["2", "j", "?", "/"]) fireEvent.keyDown(input, { key });
    fireEvent.keyDown(input, { key: ".", ctrlKey: true });
    fireEvent.keyDown(input, { key: "Escape" });
    expect(onAction).not.toHaveBeenCalled();
    expect(screen.queryByTestId("shortcut-sheet")).toBeNull();
    expect(document.activeElement).toBe(input);
  });
});

// Tests for the modal: focus moves in and is trapped, Esc closes, focus returns to the opener.
import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { ConfirmDialog } from "./ConfirmDialog";

function Harness() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open
      </button>
      {open && (
        <ConfirmDialog
          title="Delete session?"
          confirmLabel="Delete"
          onConfirm={() => setOpen(false)}
          onCancel={() => setOpen(false)}
        >
          <label>
            <input type="checkbox" /> Keep transcript
          </label>
        </ConfirmDialog>
      )}
    </>
  );
}

describe("Modal", () => {
  it("is a labelled dialog that traps focus and closes on Escape", () => {
    render(<Harness />);
    const opener = screen.getByRole("button", { name: "Open" });
    opener.focus();
    fireEvent.click(opener);

    const dialog = screen.getByRole("dialog", { name: "Delete session?" });
    expect(dialog).toHaveAttribute("aria-modal", "true");
    const cancel = screen.getByRole("button", { name: "Cancel" });
    const confirm = screen.getByTestId("confirm");
    const checkbox = screen.getByRole("checkbox");
    expect(cancel).toHaveFocus();

    confirm.focus();
    fireEvent.keyDown(confirm, { key: "Tab" });
    expect(checkbox).toHaveFocus();
    fireEvent.keyDown(checkbox, { key: "Tab", shiftKey: true });
    expect(confirm).toHaveFocus();

    fireEvent.keyDown(confirm, { key: "Escape" });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(opener).toHaveFocus();
  });
});

// Tests for the Terminal tab: what it says when the server offers no terminals, which open buttons it offers, and a refused open in words (xterm needs a real browser: the list, Stop and the screen are tests/browser/terminal.test.mjs's).
import { fireEvent, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { KilnError } from "../../api/backend";
import { appState, fakeBackend } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { TerminalPanel } from "./TerminalPanel";

function setup(
  flags: { terminals: boolean; agentTerminals: boolean },
  handlers: Parameters<typeof fakeBackend>[0] = {},
) {
  const backend = fakeBackend({
    get_state: () => ({ ...appState, ...flags }),
    ...handlers,
  });
  renderWithStore(<TerminalPanel sessionId="s1" open />, backend);
  return backend;
}

describe("TerminalPanel", () => {
  it("explains that the server was started without --allow-terminals", async () => {
    setup({ terminals: false, agentTerminals: false });
    expect(await screen.findByText("Terminals are off")).toBeInTheDocument();
    expect(screen.getByTestId("terminal-panel")).toHaveTextContent("kiln serve --allow-terminals");
    expect(screen.queryByTestId("new-terminal")).toBeNull();
  });

  it("offers the agents' CLIs only where the engine does", async () => {
    setup({ terminals: true, agentTerminals: false }, { list_terminals: () => [] });
    expect(await screen.findByTestId("new-terminal")).toBeInTheDocument();
    expect(screen.queryByTestId("open-claude")).toBeNull();
    expect(await screen.findByText("No terminals")).toBeInTheDocument();
  });

  it("shows a refused open in words, with its code behind details", async () => {
    const backend = setup(
      { terminals: true, agentTerminals: true },
      {
        list_terminals: () => [],
        open_terminal: () => {
          throw new KilnError("TERMINAL_LIMIT", "This session already has 8 running terminals.");
        },
      },
    );
    fireEvent.click(await screen.findByTestId("open-codex"));
    const error = await screen.findByTestId("error");
    expect(error).toHaveAttribute("data-code", "TERMINAL_LIMIT");
    expect(error).toHaveTextContent("8 running terminals");
    expect(backend.call).toHaveBeenCalledWith("open_terminal", { sessionId: "s1", kind: "codex" });
  });
});

// Tests for the MCP servers in Settings: shared and own servers listed by name with no value, adding one sends its values once (and never shows them), the check shows tools or why a server failed, a user's server can be removed, and a self-hosted server offers no form.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import type { McpServerView, SettingsView } from "../../api/types";
import { fakeBackend, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { McpServersSection, parsePairs } from "./McpServersSection";

const shared: McpServerView = {
  name: "notes",
  source: "repository",
  command: "node",
  args: ["tools/notes.mjs"],
  url: null,
  envNames: ["NOTES_TOKEN"],
  headerNames: [],
  overridden: false,
};
const mine: McpServerView = {
  ...shared,
  name: "docs",
  source: "settings",
  command: null,
  args: [],
  url: "https://mcp.example.test",
  envNames: [],
  headerNames: ["Authorization"],
};

describe("parsePairs", () => {
  it("reads NAME=value lines and names a line without a name", () => {
    expect(parsePairs(" A=1\n\nB = x=y \n", "Variable")).toEqual([
      { name: "A", value: "1" },
      { name: "B", value: " x=y" },
    ]);
    expect(() => parsePairs("=oops", "Header")).toThrow(/Header lines are NAME=value/);
  });
});

describe("McpServersSection", () => {
  it("lists servers by name, adds one with its values sent once, checks and removes", async () => {
    let view: SettingsView = makeSettings({ mcpServers: [shared] });
    const save = vi.fn((args: unknown) => {
      view = { ...view, mcpServers: [shared, mine] };
      return { args, view }.view;
    });
    const backend = fakeBackend({
      save_mcp_server: save,
      check_mcp_servers: () => [
        {
          name: "notes",
          source: "repository",
          started: true,
          server: "notes 1.0.0",
          tools: ["note"],
          error: null,
          millis: 40,
        },
        {
          name: "docs",
          source: "settings",
          started: false,
          server: null,
          tools: [],
          error: "it answered HTTP 401 Unauthorized",
          millis: 12,
        },
      ],
      remove_mcp_server: () => ({ ...view, mcpServers: [shared] }),
    });
    const changed = vi.fn();
    function Host() {
      const [held, setHeld] = useState(view);
      return (
        <McpServersSection
          view={held}
          onChanged={(next) => {
            changed(next);
            setHeld(next);
          }}
          readOnly={false}
        />
      );
    }
    renderWithStore(<Host />, backend);

    const notes = screen.getByText("notes").closest("li") as HTMLElement;
    expect(within(notes).getByTestId("mcp-source")).toHaveTextContent("kiln.toml");
    expect(notes).toHaveTextContent("with NOTES_TOKEN");

    fireEvent.change(screen.getByTestId("mcp-name"), { target: { value: "docs" } });
    fireEvent.change(screen.getByTestId("mcp-kind"), { target: { value: "url" } });
    fireEvent.change(screen.getByTestId("mcp-url"), { target: { value: "https://mcp.example.test" } });
    fireEvent.change(screen.getByTestId("mcp-values"), { target: { value: "Authorization=Bearer SECRET-9" } });
    fireEvent.click(screen.getByTestId("mcp-save"));
    await waitFor(() => expect(changed).toHaveBeenCalled());
    expect(backend.call).toHaveBeenCalledWith("save_mcp_server", {
      name: "docs",
      url: "https://mcp.example.test",
      headers: [{ name: "Authorization", value: "Bearer SECRET-9" }],
    });
    expect(screen.getByTestId("mcp-values")).toHaveValue("");
    expect(document.body).not.toHaveTextContent("SECRET-9");

    fireEvent.click(screen.getByTestId("mcp-check-all"));
    await waitFor(() => expect(screen.getAllByTestId("mcp-check")).toHaveLength(2));
    const [ok, failed] = screen.getAllByTestId("mcp-check");
    expect(ok).toHaveTextContent("answered · 1 tool");
    expect(ok).toHaveTextContent("note");
    expect(failed).toHaveTextContent("failed");
    expect(failed).toHaveTextContent("HTTP 401");

    const docs = screen.getByText("docs").closest("li") as HTMLElement;
    fireEvent.click(within(docs).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(screen.queryByText("docs")).not.toBeInTheDocument());
    expect(backend.call).toHaveBeenCalledWith("remove_mcp_server", { name: "docs" });
  });

  it("says why a line is refused before anything is sent, and offers no form to a self-hosted server", () => {
    const backend = fakeBackend({});
    const { unmount } = renderWithStore(
      <McpServersSection view={makeSettings()} onChanged={() => {}} readOnly={false} />,
      backend,
    );
    expect(screen.getByTestId("mcp-none")).toBeInTheDocument();
    fireEvent.change(screen.getByTestId("mcp-name"), { target: { value: "x" } });
    fireEvent.change(screen.getByTestId("mcp-values"), { target: { value: "no-equals-sign" } });
    fireEvent.click(screen.getByTestId("mcp-save"));
    expect(screen.getByRole("alert")).toHaveTextContent("Variable lines are NAME=value");
    expect(backend.call).not.toHaveBeenCalledWith("save_mcp_server", expect.anything());
    unmount();
    renderWithStore(
      <McpServersSection view={makeSettings({ mcpServers: [shared] })} onChanged={() => {}} readOnly />,
      backend,
    );
    expect(screen.queryByTestId("mcp-add")).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Remove" })).not.toBeInTheDocument();
  });
});

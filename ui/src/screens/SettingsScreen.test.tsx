// Tests for the settings screen: only changed fields are saved, the key is write-only and never shown, errors inline.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { UpdateSettingsArgs } from "../api/types";
import { fakeBackend, makeSettings } from "../test/fixtures";
import { renderWithStore } from "../test/render";
import { changedFields, formOf, SettingsScreen } from "./SettingsScreen";

const SECRET = "sk-test-very-secret-1234";
const stored = makeSettings({ openaiBaseUrl: "https://api.example.com/v1", openaiModel: "gpt-4.1", openaiKeyFingerprint: "sha256:ab12cd" });

describe("changedFields", () => {
  it("returns nothing when nothing changed, and only what changed otherwise", () => {
    expect(changedFields(stored, formOf(stored), "", false)).toEqual({});
    const form = { ...formOf(stored), codexPath: "/opt/codex", openaiModel: "" };
    expect(changedFields(stored, form, "", false)).toEqual({ codexPath: "/opt/codex", openaiModel: "" });
    expect(changedFields(stored, formOf(stored), "", true)).toEqual({ openaiKey: "" });
    expect(changedFields(stored, formOf(stored), " k ", false)).toEqual({ openaiKey: "k" });
    const planner = !stored.plannerAgent;
    expect(changedFields(stored, { ...formOf(stored), plannerAgent: planner }, "", false)).toEqual({ plannerAgent: planner });
  });
});

describe("SettingsScreen", () => {
  it("shows drivers and the key's fingerprint, and saves only the changed fields", async () => {
    const backend = fakeBackend({
      get_settings: () => stored,
      update_settings: (args) => ({ ...stored, defaultDriver: args.defaultDriver ?? stored.defaultDriver, claudePath: args.claudePath ?? null }),
    });
    renderWithStore(<SettingsScreen />, backend);

    const list = await screen.findByTestId("driver-list");
    expect(within(list).getAllByRole("listitem")).toHaveLength(3);
    expect(list).toHaveTextContent("install it with `npm i -g @openai/codex`");
    expect(screen.getByTestId("key-fingerprint")).toHaveTextContent("stored: sha256:ab12cd");
    expect(screen.getByTestId("save-settings")).toBeDisabled();

    fireEvent.change(screen.getByTestId("default-driver"), { target: { value: "codex" } });
    fireEvent.change(screen.getByTestId("claude-path"), { target: { value: "/usr/bin/claude" } });
    fireEvent.click(screen.getByTestId("save-settings"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_settings", { defaultDriver: "codex", claudePath: "/usr/bin/claude" }),
    );
    expect(await screen.findByTestId("saved")).toBeInTheDocument();
    expect(screen.getByTestId("default-driver")).toHaveValue("codex");
  });

  it("sends a typed key once and never renders it", async () => {
    let sent: UpdateSettingsArgs | undefined;
    const backend = fakeBackend({
      get_settings: () => makeSettings(),
      update_settings: (args) => {
        sent = args;
        return makeSettings({ openaiKeyFingerprint: "sha256:9f9f" });
      },
    });
    const { container } = renderWithStore(<SettingsScreen />, backend);
    const key = await screen.findByTestId("openai-key");
    expect(key).toHaveAttribute("type", "password");

    fireEvent.change(key, { target: { value: SECRET } });
    fireEvent.click(screen.getByTestId("save-settings"));

    await waitFor(() => expect(sent).toEqual({ openaiKey: SECRET }));
    expect(await screen.findByTestId("key-fingerprint")).toHaveTextContent("stored: sha256:9f9f");
    expect(screen.getByTestId("openai-key")).toHaveValue("");
    expect(container.innerHTML).not.toContain(SECRET);
    expect(document.body.innerHTML).not.toContain(SECRET);
  });

  it("clears the key with Clear, and shows update errors inline", async () => {
    const backend = fakeBackend({
      get_settings: () => stored,
      update_settings: () => {
        throw { code: "INVALID_INPUT", message: "give the API key again with the new endpoint" };
      },
    });
    renderWithStore(<SettingsScreen />, backend);
    fireEvent.click(await screen.findByTestId("clear-key"));
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("update_settings", { openaiKey: "" }));
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("INVALID_INPUT");
    expect(error).toHaveTextContent("give the API key again");
  });

  it("warns that a new base URL needs the key again", async () => {
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => stored }));
    fireEvent.change(await screen.findByTestId("openai-base-url"), { target: { value: "https://other.example.com/v1" } });
    expect(screen.getByTestId("key-needed")).toBeInTheDocument();
    fireEvent.change(screen.getByTestId("openai-key"), { target: { value: "sk-new" } });
    expect(screen.queryByTestId("key-needed")).not.toBeInTheDocument();
  });
});

// Tests for the settings screen: only changed fields are saved, the key and the bridge token are write-only and never shown, errors inline, only offered drivers, the command policy and how commands are confined.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { UpdateSettingsArgs } from "../../api/types";
import { fakeBackend, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { SettingsScreen } from "./SettingsScreen";
import { changedFields, confinementTone, formOf, NO_SECRETS, unavailableDefault } from "./settingsForm";

const SECRET = "sk-test-very-secret-1234";
const stored = makeSettings({
  openaiBaseUrl: "https://api.example.com/v1",
  openaiModel: "gpt-4.1",
  openaiKeyFingerprint: "sha256:ab12cd",
});

describe("changedFields", () => {
  it("returns nothing when nothing changed, and only what changed otherwise", () => {
    expect(changedFields(stored, formOf(stored))).toEqual({});
    const form = { ...formOf(stored), codexPath: "/opt/codex", openaiModel: "" };
    expect(changedFields(stored, form)).toEqual({ codexPath: "/opt/codex", openaiModel: "" });
    expect(changedFields(stored, formOf(stored), { ...NO_SECRETS, openaiKey: { value: "", clear: true } })).toEqual({
      openaiKey: "",
    });
    expect(changedFields(stored, formOf(stored), { ...NO_SECRETS, openaiKey: { value: " k ", clear: false } })).toEqual(
      { openaiKey: "k" },
    );
    expect(
      changedFields(stored, formOf(stored), { ...NO_SECRETS, bridgeToken: { value: " t ", clear: false } }),
    ).toEqual({ bridgeToken: "t" });
    const moved = { ...formOf(stored), bridgeUrl: "https://app.example.com" };
    expect(changedFields(stored, moved)).toEqual({ bridgeUrl: "https://app.example.com" });
    const planner = !stored.plannerAgent;
    expect(changedFields(stored, { ...formOf(stored), plannerAgent: planner })).toEqual({ plannerAgent: planner });
    expect(changedFields(stored, { ...formOf(stored), commandPolicy: "none" })).toEqual({ commandPolicy: "none" });
  });
});

describe("confinementTone", () => {
  it("is success when Landlock confines fully, a warning when partly or not at all", () => {
    const base = makeSettings().confinement;
    expect(confinementTone(base)).toEqual({ tone: "success", label: "landlock" });
    expect(confinementTone({ ...base, abi: 2, enforcement: "partial" })).toEqual({
      tone: "warn",
      label: "landlock, partly",
    });
    expect(confinementTone({ ...base, available: false, mechanism: "none", abi: null, enforcement: "none" })).toEqual({
      tone: "warn",
      label: "not confined",
    });
  });
});

describe("SettingsScreen", () => {
  it("shows drivers and the key's fingerprint, and saves only the changed fields", async () => {
    const backend = fakeBackend({
      get_settings: () => stored,
      update_settings: (args) => ({
        ...stored,
        defaultDriver: args.defaultDriver ?? stored.defaultDriver,
        claudePath: args.claudePath ?? null,
      }),
    });
    renderWithStore(<SettingsScreen />, backend);

    const list = await screen.findByTestId("driver-list");
    expect(within(list).getAllByRole("listitem")).toHaveLength(3);
    expect(list).toHaveTextContent("install it with npm i -g @openai/codex");
    expect(screen.getByTestId("key-fingerprint")).toHaveTextContent("stored: sha256:ab12cd");
    expect(screen.getByTestId("save-settings")).toBeDisabled();

    fireEvent.change(screen.getByTestId("default-driver"), { target: { value: "codex" } });
    fireEvent.change(screen.getByTestId("claude-path"), { target: { value: "/usr/bin/claude" } });
    fireEvent.click(screen.getByTestId("save-settings"));
    // codex is unavailable here: Save asks first.
    fireEvent.click(within(await screen.findByRole("dialog")).getByTestId("confirm"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_settings", {
        defaultDriver: "codex",
        claudePath: "/usr/bin/claude",
      }),
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
    fireEvent.change(await screen.findByTestId("openai-base-url"), {
      target: { value: "https://other.example.com/v1" },
    });
    expect(screen.getByTestId("key-needed")).toBeInTheDocument();
    fireEvent.change(screen.getByTestId("openai-key"), { target: { value: "sk-new" } });
    expect(screen.queryByTestId("key-needed")).not.toBeInTheDocument();
  });

  it("shows the connected application's token fingerprint once saved, never the token", async () => {
    const TOKEN = "bridge-token-very-secret-5678";
    const saved = makeSettings({ bridgeUrl: "https://app.example.com", bridgeTokenFingerprint: "0a1b2c3d" });
    const backend = fakeBackend({
      get_settings: () => makeSettings({ bridgeUrl: "https://app.example.com" }),
      update_settings: () => saved,
    });
    renderWithStore(<SettingsScreen />, backend);

    const token = await screen.findByTestId("bridge-token");
    expect(token).toHaveAttribute("type", "password");
    expect(screen.getByTestId("bridge-url")).toHaveValue("https://app.example.com");
    expect(screen.queryByTestId("bridge-token-fingerprint")).not.toBeInTheDocument();

    fireEvent.change(token, { target: { value: TOKEN } });
    fireEvent.click(screen.getByTestId("save-settings"));

    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("update_settings", { bridgeToken: TOKEN }));
    expect(await screen.findByTestId("bridge-token-fingerprint")).toHaveTextContent("stored: 0a1b2c3d");
    expect(screen.getByTestId("bridge-token")).toHaveValue("");
    expect(document.body.innerHTML).not.toContain(TOKEN);
  });

  it("shows the server's INVALID_INPUT inline when a changed address comes without a token", async () => {
    const backend = fakeBackend({
      get_settings: () => makeSettings({ bridgeUrl: "https://app.example.com", bridgeTokenFingerprint: "0a1b2c3d" }),
      update_settings: () => {
        throw { code: "INVALID_INPUT", message: "a new bridge_url needs bridge_token in the same request" };
      },
    });
    renderWithStore(<SettingsScreen />, backend);
    fireEvent.change(await screen.findByTestId("bridge-url"), { target: { value: "https://other.example.com" } });
    expect(screen.getByTestId("bridge-token-needed")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("save-settings"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_settings", { bridgeUrl: "https://other.example.com" }),
    );
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("INVALID_INPUT");
    expect(error).toHaveTextContent("a new bridge_url needs bridge_token");
    expect(screen.getByTestId("bridge-token-fingerprint")).toHaveTextContent("0a1b2c3d");
  });

  it("offers only the drivers the server lists (self-hosted: bring-your-own-key only)", async () => {
    const openai = {
      id: "openai-compatible",
      available: true,
      detail: "gpt-4.1 at https://api.example.com/v1",
      version: null,
      signedIn: true,
    };
    const backend = fakeBackend({ get_settings: () => makeSettings({ defaultDriver: "claude", drivers: [openai] }) });
    renderWithStore(<SettingsScreen />, backend);

    const list = await screen.findByTestId("driver-list");
    expect(
      within(list)
        .getAllByRole("listitem")
        .map((li) => li.getAttribute("data-driver")),
    ).toEqual(["openai-compatible"]);
    expect(screen.queryByTestId("claude-path")).not.toBeInTheDocument();
    expect(screen.queryByTestId("codex-path")).not.toBeInTheDocument();
    expect(screen.getByTestId("openai-key")).toBeInTheDocument();

    const choices = within(screen.getByTestId("default-driver")).getAllByRole("option") as HTMLOptionElement[];
    expect(choices.filter((o) => !o.disabled).map((o) => o.value)).toEqual(["openai-compatible"]);
    expect(choices.find((o) => o.value === "claude")?.disabled).toBe(true);
  });

  it("shows the command policy and the confinement, and saves a new policy", async () => {
    const backend = fakeBackend({
      get_settings: () => makeSettings(),
      update_settings: (args) => makeSettings({ commandPolicy: args.commandPolicy === "none" ? "none" : "workdir" }),
    });
    renderWithStore(<SettingsScreen />, backend);

    const workdir = await screen.findByTestId("command-policy-workdir");
    expect(workdir).toBeChecked();
    expect(screen.getByTestId("command-policy")).toHaveTextContent("Commands in the working copy");
    expect(screen.getByTestId("command-policy")).toHaveTextContent("No commands");
    const confinement = screen.getByTestId("confinement");
    expect(confinement).toHaveAttribute("data-available", "true");
    expect(confinement).toHaveTextContent("landlock");
    expect(confinement).toHaveTextContent(
      "Commands run under Landlock (ABI 7): they may write only to the working copy",
    );

    fireEvent.click(screen.getByTestId("command-policy-none"));
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("update_settings", { commandPolicy: "none" }));
    expect(await screen.findByTestId("saved")).toBeInTheDocument();
    expect(screen.getByTestId("command-policy-none")).toBeChecked();
  });

  it("offers no commands when the server allows none", async () => {
    renderWithStore(
      <SettingsScreen />,
      fakeBackend({ get_settings: () => makeSettings({ commandPolicy: "none", commandsAllowed: false }) }),
    );
    expect(await screen.findByTestId("command-policy-none")).toBeChecked();
    expect(screen.getByTestId("command-policy-workdir")).toBeDisabled();
    expect(screen.getByTestId("commands-not-allowed")).toHaveTextContent("kiln serve --allow-agent-commands");
  });

  it("says when this kernel cannot confine commands", async () => {
    const detail =
      "This kernel has no Landlock (Linux 5.13 or later, with Landlock enabled, has it): commands run with the policy alone.";
    const confinement = { available: false, mechanism: "none", abi: null, enforcement: "none", detail };
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => makeSettings({ confinement }) }));
    const line = await screen.findByTestId("confinement");
    expect(line).toHaveAttribute("data-available", "false");
    expect(line).toHaveTextContent("not confined");
    expect(line).toHaveTextContent("commands run with the policy alone");
  });

  it("offers the local drivers' binaries when the server lists them", async () => {
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => makeSettings() }));
    expect(await screen.findByTestId("claude-path")).toBeInTheDocument();
    expect(screen.getByTestId("codex-path")).toBeInTheDocument();
    const choices = within(screen.getByTestId("default-driver")).getAllByRole("option") as HTMLOptionElement[];
    expect(choices.map((o) => o.value)).toEqual(["claude", "codex", "openai-compatible"]);
    expect(choices.some((o) => o.disabled)).toBe(false);
  });

  it("lists each installed driver's version and sign-in, unknown only when the engine could not tell", async () => {
    const settings = makeSettings();
    settings.drivers = [
      {
        id: "claude",
        available: true,
        detail: "/usr/local/bin/claude",
        version: "2.0.14 (Claude Code)",
        signedIn: false,
      },
      { id: "codex", available: true, detail: "/usr/local/bin/codex", version: null, signedIn: null },
      {
        id: "openai-compatible",
        available: false,
        detail: "set the endpoint and model in Settings",
        version: null,
        signedIn: null,
      },
    ];
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => settings }));
    const list = await screen.findByTestId("driver-list");
    const line = (id: string) => list.querySelector(`[data-driver="${id}"]`) as HTMLElement;
    expect(within(line("claude")).getByTestId("driver-version")).toHaveTextContent(/^v2\.0\.14$/);
    expect(within(line("claude")).getByTestId("driver-signed-in")).toHaveTextContent(/^not signed in$/);
    expect(within(line("codex")).getByTestId("driver-version")).toHaveTextContent("version unknown");
    expect(within(line("codex")).getByTestId("driver-signed-in")).toHaveTextContent("sign-in unknown");
    // Nothing about a version or a login for what is not there.
    expect(within(line("openai-compatible")).queryByTestId("driver-version")).toBeNull();
    expect(within(line("openai-compatible")).queryByTestId("driver-signed-in")).toBeNull();
  });

  it("never says a missing binary was found on PATH", async () => {
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => makeSettings() }));
    const codex = (await screen.findByTestId("codex-path")) as HTMLInputElement;
    expect(codex.placeholder).toBe("not found on PATH");
    expect((screen.getByTestId("claude-path") as HTMLInputElement).placeholder).toBe("found: /usr/local/bin/claude");
    const line = screen.getByTestId("driver-list").querySelector('[data-driver="codex"]')!;
    expect(line).toHaveTextContent("unavailable");
    expect(screen.getByTestId("settings-form")).not.toHaveTextContent(/found on PATH/);
    const codexChoice = within(screen.getByTestId("default-driver")).getByRole("option", {
      name: "codex (unavailable)",
    });
    expect(codexChoice).toBeInTheDocument();
  });

  it("asks before saving an unavailable driver as the default, with the reason and how to install it", async () => {
    const backend = fakeBackend({
      get_settings: () => makeSettings(),
      update_settings: (args: UpdateSettingsArgs) => makeSettings({ defaultDriver: args.defaultDriver ?? "claude" }),
    });
    renderWithStore(<SettingsScreen />, backend);
    fireEvent.change(await screen.findByTestId("default-driver"), { target: { value: "codex" } });
    expect(screen.getByTestId("default-driver-unavailable")).toHaveTextContent(
      "codex is unavailable: install it with npm i -g @openai/codex",
    );
    fireEvent.click(screen.getByTestId("save-settings"));
    const dialog = await screen.findByRole("dialog");
    expect(dialog).toHaveTextContent("Make codex the default while it is unavailable?");
    expect(within(dialog).getByTestId("unavailable-default-reason")).toHaveTextContent(
      "install it with npm i -g @openai/codex",
    );
    expect(backend.call).not.toHaveBeenCalledWith("update_settings", expect.anything());

    // Cancel keeps the form as it is, unsaved.
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(backend.call).not.toHaveBeenCalledWith("update_settings", expect.anything());

    fireEvent.click(screen.getByTestId("save-settings"));
    fireEvent.click(within(await screen.findByRole("dialog")).getByTestId("confirm"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("update_settings", { defaultDriver: "codex" }));
  });

  it("saves an available default, or one whose path changes with it, without asking", async () => {
    const backend = fakeBackend({
      get_settings: () => makeSettings({ defaultDriver: "codex" }),
      update_settings: () => makeSettings(),
    });
    renderWithStore(<SettingsScreen />, backend);
    fireEvent.change(await screen.findByTestId("default-driver"), { target: { value: "claude" } });
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("update_settings", { defaultDriver: "claude" }));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(unavailableDefault(makeSettings(), { defaultDriver: "codex", codexPath: "/opt/codex" })).toBeNull();
    expect(unavailableDefault(makeSettings(), { defaultDriver: "codex" })?.id).toBe("codex");
  });
});

// Tests for the ACP agents in Settings and the pickers: each preset found or missing with its version or install command, paths and the custom command saved as changes, the environment write-only (names only), found agents offered by name in the default-driver picker, the new-session form and the composer.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DriverStatus, SettingsView } from "../../api/types";
import { fakeBackend, makeSession, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Composer } from "../chat/Composer";
import { AgentChoice } from "../dashboard/AgentChoice";
import { SettingsScreen } from "./SettingsScreen";
import { changedFields, formOf, NO_SECRETS, unavailableDefault } from "./settingsForm";

const preset = (id: string, name: string, command: string, installHint: string, path: string | null = null) => ({
  id,
  name,
  command,
  installHint,
  path,
});

const acpStatus = (id: string, name: string, available: boolean, detail: string, version: string | null = null) =>
  ({ id, name, available, detail, version, signedIn: null }) satisfies DriverStatus;

function withAcp(): SettingsView {
  const base = makeSettings();
  return {
    ...base,
    acpAgents: [
      preset("acp:gemini", "Gemini CLI (ACP)", "gemini --acp", "npm install -g @google/gemini-cli"),
      preset("acp:opencode", "OpenCode (ACP)", "opencode acp", "npm install -g opencode-ai", "/opt/oc/bin/opencode"),
      preset("acp:custom", "Custom ACP agent", "my-agent --acp", "set the agent's command line in Settings"),
    ],
    acpCustomEnvNames: ["MY_API_KEY"],
    drivers: [
      ...base.drivers,
      acpStatus("acp:gemini", "Gemini CLI (ACP)", false, "`gemini` was not found: npm install -g @google/gemini-cli"),
      acpStatus("acp:opencode", "OpenCode (ACP)", true, "/opt/oc/bin/opencode", "1.18.33"),
      acpStatus("acp:custom", "Custom ACP agent", true, "/usr/local/bin/my-agent", "my-agent 2.0.1"),
    ],
  };
}

describe("ACP settings form", () => {
  it("sends a changed path, the custom command and the environment lines, and nothing when unchanged", () => {
    const view = withAcp();
    expect(changedFields(view, formOf(view))).toEqual({});
    const form = formOf(view);
    expect(form.acpPaths).toEqual({ "acp:gemini": "", "acp:opencode": "/opt/oc/bin/opencode" });
    expect(form.acpCustomCommand).toBe("my-agent --acp");
    const changed = {
      ...form,
      acpPaths: { ...form.acpPaths, "acp:gemini": " /opt/gemini " },
      acpCustomCommand: "other --acp",
    };
    const env = { ...NO_SECRETS, acpCustomEnv: { value: "A=1\nB=2\n", clear: false } };
    expect(changedFields(view, changed, env)).toEqual({
      acpPaths: { "acp:gemini": "/opt/gemini" },
      acpCustomCommand: "other --acp",
      acpCustomEnv: "A=1\nB=2\n",
    });
    expect(changedFields(view, form, { ...NO_SECRETS, acpCustomEnv: { value: "", clear: true } })).toEqual({
      acpCustomEnv: "",
    });
  });

  it("names a missing ACP agent that is the default, and keeps offering it", async () => {
    renderWithStore(
      <SettingsScreen />,
      fakeBackend({ get_settings: () => ({ ...withAcp(), defaultDriver: "acp:gemini" }) }),
    );
    const select = (await screen.findByTestId("default-driver")) as HTMLSelectElement;
    expect(select.value).toBe("acp:gemini");
    expect(select.selectedOptions[0]).toHaveTextContent("Gemini CLI (ACP) (unavailable)");
    expect(screen.getByTestId("default-driver-unavailable")).toHaveTextContent(
      "Gemini CLI (ACP) is unavailable: gemini was not found: npm install -g @google/gemini-cli",
    );
  });

  it("asks before making a missing ACP agent the default, unless its path changes with it", () => {
    const view = withAcp();
    expect(unavailableDefault(view, { defaultDriver: "acp:gemini" })?.id).toBe("acp:gemini");
    expect(unavailableDefault(view, { defaultDriver: "acp:gemini", acpPaths: { "acp:gemini": "/x" } })).toBeNull();
    expect(unavailableDefault(view, { defaultDriver: "acp:opencode" })).toBeNull();
  });
});

describe("ACP agents in Settings", () => {
  it("lists each preset found with its version or missing with its install command", async () => {
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => withAcp() }));
    const list = await screen.findByTestId("acp-agent-list");
    const line = (id: string) => list.querySelector(`[data-driver="${id}"]`) as HTMLElement;
    expect(within(list).getAllByRole("listitem")).toHaveLength(2);
    expect(line("acp:gemini")).toHaveTextContent("Gemini CLI (ACP)");
    expect(within(line("acp:gemini")).getByTestId("acp-found")).toHaveTextContent("missing");
    expect(within(line("acp:gemini")).getByTestId("acp-install")).toHaveTextContent(
      "npm install -g @google/gemini-cli",
    );
    expect(within(line("acp:gemini")).queryByTestId("acp-version")).toBeNull();
    expect(within(line("acp:opencode")).getByTestId("acp-found")).toHaveTextContent("found");
    expect(within(line("acp:opencode")).getByTestId("acp-version")).toHaveTextContent("v1.18.33");
    expect(line("acp:opencode")).toHaveTextContent("/opt/oc/bin/opencode");
    // The ACP agents have their own section, not the drivers list.
    expect(screen.getByTestId("driver-list").querySelector('[data-driver^="acp:"]')).toBeNull();
    expect(screen.getByTestId("acp-custom-status")).toHaveTextContent("found");
    expect(screen.getByTestId("acp-custom-status")).toHaveTextContent("v2.0.1");
    // The environment's values never come back: only the names.
    expect(screen.getByTestId("acp-env-names")).toHaveTextContent("stored, sealed: MY_API_KEY");
    expect((screen.getByTestId("acp-custom-env") as HTMLTextAreaElement).value).toBe("");
  });

  it("offers found ACP agents by name as the default, and saves the custom command with its environment", async () => {
    const view = withAcp();
    const backend = fakeBackend({ get_settings: () => view, update_settings: () => view });
    renderWithStore(<SettingsScreen />, backend);
    const select = (await screen.findByTestId("default-driver")) as HTMLSelectElement;
    const options = Array.from(select.options).map((o) => o.textContent);
    expect(options).toContain("OpenCode (ACP)");
    expect(options).toContain("Custom ACP agent");
    expect(options.some((o) => o?.includes("Gemini"))).toBe(false);

    fireEvent.change(screen.getByTestId("acp-custom-command"), { target: { value: "my-agent --acp --fast" } });
    fireEvent.change(screen.getByTestId("acp-custom-env"), { target: { value: "MY_API_KEY=new\n" } });
    fireEvent.change(screen.getByTestId("acp-path-gemini"), { target: { value: "/opt/gemini/bin/gemini" } });
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_settings", {
        acpCustomCommand: "my-agent --acp --fast",
        acpCustomEnv: "MY_API_KEY=new\n",
        acpPaths: { "acp:gemini": "/opt/gemini/bin/gemini" },
      }),
    );
  });

  it("shows no ACP section on a server that offers none", async () => {
    renderWithStore(<SettingsScreen />, fakeBackend({ get_settings: () => makeSettings() }));
    await screen.findByTestId("driver-list");
    expect(screen.queryByTestId("acp-agents")).toBeNull();
  });
});

describe("the new-session agent picker", () => {
  it("offers a found ACP agent by its name and shows its health when picked", () => {
    const view = withAcp();
    let picked = "";
    // The form's agent line needs no store: it is given the settings.
    const { rerender } = render(
      <AgentChoice settings={view} driver="" onDriver={(d) => (picked = d)} model="" onModel={() => {}} />,
    );
    const select = screen.getByTestId("agent-driver") as HTMLSelectElement;
    const labels = Array.from(select.options).map((o) => o.textContent);
    expect(labels).toContain("OpenCode (ACP)");
    expect(labels.some((l) => l?.includes("Gemini"))).toBe(false);
    fireEvent.change(select, { target: { value: "acp:opencode" } });
    expect(picked).toBe("acp:opencode");
    rerender(<AgentChoice settings={view} driver="acp:opencode" onDriver={() => {}} model="" onModel={() => {}} />);
    expect(screen.getByTestId("agent-health")).toHaveAttribute("data-driver", "acp:opencode");
    expect(screen.getByTestId("agent-version")).toHaveTextContent("v1.18.33");
    expect(screen.getByTestId("agent-model")).toHaveAttribute("placeholder", "OpenCode (ACP)'s default");
  });
});

describe("the composer's driver picker", () => {
  it("offers a found ACP agent by its name and sends its id", async () => {
    const session = makeSession({ state: "editing" });
    const backend = fakeBackend({ send_message: () => session });
    renderWithStore(<Composer session={session} settings={withAcp()} />, backend);
    const picker = screen.getByTestId("driver-picker") as HTMLSelectElement;
    const labels = Array.from(picker.options).map((o) => o.textContent);
    expect(labels).toContain("OpenCode (ACP)");
    expect(labels.some((l) => l?.includes("Gemini"))).toBe(false);
    fireEvent.change(picker, { target: { value: "acp:opencode" } });
    fireEvent.change(screen.getByTestId("message"), { target: { value: "Add a coupon field" } });
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith(
        "send_message",
        expect.objectContaining({ text: "Add a coupon field", driver: "acp:opencode" }),
      ),
    );
  });
});

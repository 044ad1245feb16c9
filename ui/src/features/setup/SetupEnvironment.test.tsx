// Tests for the set-up screen's "Environment for commands": collapsed with its count, every passed variable by source with its value, "(hidden)" for a value kept from view, and the tool configuration files read from a copy.
import { fireEvent, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { appState, fakeBackend, makeDetection, workspace } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { SetupScreen } from "./SetupScreen";

/** A workspace without kiln.toml, as get_state reports it. */
const freshState = { ...appState, workspace: { ...workspace, root: "/home/dev/blog", name: "blog", configPath: null } };

describe("SetupScreen environment for commands", () => {
  it("lists the variables by source, hides a kept value, and names the config files read from a copy", async () => {
    const backend = fakeBackend({ get_state: () => freshState, detect_workspace: () => makeDetection() });
    renderWithStore(<SetupScreen />, backend);

    const section = await screen.findByTestId("setup-environment");
    // Collapsed by default, its summary counting what passes.
    expect(section).not.toHaveAttribute("open");
    expect(screen.getByTestId("setup-environment-summary")).toHaveTextContent(
      "Environment for commands · 4 variables, 1 file",
    );
    expect(screen.getByText(/names that look secret never pass/)).not.toBeVisible();
    fireEvent.click(screen.getByTestId("setup-environment-summary"));
    expect(section).toHaveAttribute("open");
    expect(screen.getByText(/names that look secret never pass/)).toBeVisible();

    // Every name, in the engine's order, grouped by source.
    const names = within(section)
      .getAllByTestId("setup-env-var")
      .map((v) => v.getAttribute("data-name"));
    expect(names).toEqual(["LANG", "NPM_CONFIG_REGISTRY", "NPM_TOKEN", "PUPPETEER_SKIP_DOWNLOAD"]);
    expect(
      within(section)
        .getAllByTestId("setup-env-group")
        .map((g) => g.getAttribute("data-source")),
    ).toEqual(["your environment", "kiln.toml [environment] pass", "kiln.toml [environment] set"]);

    const line = (name: string) => within(section).getByText(name).closest("li") as HTMLElement;
    expect(line("NPM_CONFIG_REGISTRY")).toHaveTextContent("NPM_CONFIG_REGISTRY = https://registry.npmjs.org/");
    // The full value also in a title, for when it is cut.
    expect(within(line("NPM_CONFIG_REGISTRY")).getByTitle("https://registry.npmjs.org/")).toHaveClass("mono");
    expect(line("PUPPETEER_SKIP_DOWNLOAD")).toHaveTextContent("PUPPETEER_SKIP_DOWNLOAD = 1");
    // A value kept from view.
    expect(line("NPM_TOKEN")).toHaveTextContent("NPM_TOKEN = (hidden)");

    const file = within(section).getByTestId("setup-env-file");
    expect(file).toHaveTextContent("~/.npmrc");
    expect(file).toHaveTextContent("read from a copy, never written");
  });

  it("counts one variable and leaves the files out when there are none", async () => {
    const backend = fakeBackend({
      get_state: () => freshState,
      detect_workspace: () =>
        makeDetection({
          environment: [{ name: "LANG", value: "C.UTF-8", source: "your environment" }],
          configFiles: [],
        }),
    });
    renderWithStore(<SetupScreen />, backend);
    expect(await screen.findByTestId("setup-environment-summary")).toHaveTextContent(
      "Environment for commands · 1 variable",
    );
    expect(screen.getByTestId("setup-environment-summary")).not.toHaveTextContent("file");
    expect(screen.queryByTestId("setup-env-file")).not.toBeInTheDocument();
  });
});

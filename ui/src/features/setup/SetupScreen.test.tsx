// Tests for the set-up screen: what was detected (workflow, toolchains, setup, every gate with its source or "not configured" and its hint, the TOML), editing and saving it as kiln.toml, CONFIG_EXISTS then Replace, Continue without saving, and the first open of a workspace without kiln.toml.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { DetectionView, SaveConfigArgs } from "../../api/types";
import { App } from "../../App";
import { setupDone } from "../../lib/setup";
import { appState, fakeBackend, makeDetection, workspace } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { SetupScreen } from "./SetupScreen";

/** A workspace without kiln.toml, as get_state reports it. */
const fresh = {
  ...workspace,
  root: "/home/dev/blog",
  name: "blog",
  configPath: null,
  workflow: "direct" as const,
  roles: [{ id: "engineer", name: "Engineer" }],
};
const freshState = { ...appState, workspace: fresh };

/** save_config's answer: the detection now read from the kiln.toml it wrote. */
function saved(args: SaveConfigArgs): DetectionView {
  const base = makeDetection();
  return {
    ...base,
    configPath: "/home/dev/blog/kiln.toml",
    workflow: args.workflow,
    modules: base.modules.map((m) => ({
      ...m,
      gates: m.gates.map((g) => {
        const command = args.modules.find((x) => x.id === m.id)?.gates[g.gate] ?? "";
        return command
          ? { ...g, command, source: "kiln.toml", hint: null }
          : { ...g, command: null, source: "kiln.toml", hint: "turned off in kiln.toml" };
      }),
    })),
    toml: `[workflow]\nmode = "${args.workflow}"\n# saved\n`,
  };
}

const input = (testId: string) => screen.getByTestId(testId) as HTMLInputElement;

afterEach(() => localStorage.clear());

describe("SetupScreen", () => {
  it("shows what was detected: workflow, toolchains, setup, every gate with its source, not configured with its hint, and the TOML", async () => {
    const backend = fakeBackend({ get_state: () => freshState, detect_workspace: () => makeDetection() });
    renderWithStore(<SetupScreen />, backend);

    const module = await screen.findByTestId("setup-module");
    expect(backend.call).toHaveBeenCalledWith("detect_workspace", {});
    expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Set up blog");
    expect(screen.getByTestId("setup-origin")).toHaveTextContent("Detected");

    // The workflow, direct chosen, each explained.
    const direct = within(screen.getByTestId("workflow-direct")).getByRole("radio");
    expect(direct).toBeChecked();
    expect(screen.getByTestId("workflow-direct")).toHaveTextContent(
      "One engineer role changes anything in the working copy; specifications optional",
    );
    expect(screen.getByTestId("workflow-specs")).toHaveTextContent(/Specialists, spec-first, approval/);

    // Toolchains: found and required versions; a missing one in red, naming what to install.
    const toolchains = screen.getAllByTestId("toolchain");
    expect(toolchains.map((t) => t.getAttribute("data-ok"))).toEqual(["true", "false"]);
    expect(toolchains[0]).toHaveTextContent("node");
    expect(toolchains[0]).toHaveTextContent("found 20.19.0");
    expect(toolchains[0]).toHaveTextContent("requires >=20");
    expect(within(toolchains[0]).queryByTestId("toolchain-message")).not.toBeInTheDocument();
    expect(toolchains[1]).toHaveTextContent("not found");
    expect(toolchains[1]).toHaveClass("setup-toolchain-missing");
    expect(within(toolchains[1]).getByTestId("toolchain-message")).toHaveTextContent(
      "Install pnpm 9 (corepack enable pnpm).",
    );

    // The setup command and where it came from.
    expect(input("setup-command")).toHaveValue("npm ci --offline");
    expect(screen.getByTestId("setup-source")).toHaveTextContent("From package-lock.json");

    // The module's five gates in order, each command editable with its source beside it.
    expect(module).toHaveAttribute("data-module", "blog");
    expect(module).toHaveTextContent("the whole repository");
    expect(
      within(module)
        .getAllByTestId("setup-gate")
        .map((r) => r.getAttribute("data-gate")),
    ).toEqual(["dependencies", "typecheck", "tests", "format", "lint"]);
    expect(input("gate-command-blog-tests")).toHaveValue("npm test");
    expect(screen.getByTestId("gate-source-blog-tests")).toHaveTextContent("package.json scripts.test");
    expect(input("gate-command-blog-format")).toHaveValue("npx prettier --check .");
    expect(screen.getByTestId("gate-source-blog-format")).toHaveTextContent(".prettierrc at the repository root");
    // Lint has no command: not configured, with the hint.
    expect(input("gate-command-blog-lint")).toHaveValue("");
    expect(input("gate-command-blog-lint")).toHaveAttribute("placeholder", "not configured");
    expect(screen.getByTestId("gate-source-blog-lint")).toHaveTextContent("not configured");
    expect(screen.getByTestId("gate-hint-blog-lint")).toHaveTextContent("No linter configured: add an eslint config");

    // The TOML a save writes, read-only.
    expect(screen.getByTestId("setup-toml").tagName).toBe("PRE");
    expect(screen.getByTestId("setup-toml")).toHaveTextContent('mode = "direct"');
    expect(screen.getByTestId("save-config")).toHaveTextContent("Save as kiln.toml");
    expect(screen.queryByTestId("replace-config")).not.toBeInTheDocument();
  });

  it("saves the edited commands as kiln.toml, then shows the saved set-up and reloads the workspace", async () => {
    const backend = fakeBackend({
      get_state: () => freshState,
      detect_workspace: () => makeDetection(),
      save_config: saved,
    });
    renderWithStore(<SetupScreen />, backend);
    await screen.findByTestId("setup-module");

    fireEvent.change(input("gate-command-blog-tests"), { target: { value: "node --test test/" } });
    // The edit is marked, with where the replaced command came from.
    expect(screen.getByTestId("gate-source-blog-tests")).toHaveTextContent("edited");
    expect(screen.getByTestId("gate-source-blog-tests")).toHaveTextContent("detected from package.json scripts.test");
    expect(screen.getByTestId("setup-toml-note")).toHaveTextContent("your changes are written when you save");
    // Clearing a command turns the gate off.
    fireEvent.change(input("gate-command-blog-format"), { target: { value: "  " } });
    expect(screen.getByTestId("gate-source-blog-format")).toHaveTextContent("not configured");
    expect(screen.getByTestId("gate-hint-blog-format")).toHaveTextContent(
      "Turned off; detected: npx prettier --check .",
    );
    fireEvent.click(within(screen.getByTestId("workflow-specs")).getByRole("radio"));

    const stateCalls = () => backend.call.mock.calls.filter(([c]) => c === "get_state").length;
    const before = stateCalls();
    fireEvent.click(screen.getByTestId("save-config"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("save_config", {
        workflow: "specs",
        setup: "npm ci --offline",
        modules: [
          {
            id: "blog",
            gates: {
              dependencies: "npm ci --offline",
              typecheck: "npx tsc --noEmit",
              tests: "node --test test/",
              format: "",
              lint: "",
            },
          },
        ],
        replace: false,
      }),
    );
    const done = await screen.findByTestId("setup-saved");
    expect(done).toHaveTextContent("Saved /home/dev/blog/kiln.toml");
    // The form starts again from the saved set-up: its commands now come from kiln.toml.
    expect(input("gate-command-blog-tests")).toHaveValue("node --test test/");
    expect(screen.getByTestId("gate-source-blog-tests")).toHaveTextContent("kiln.toml");
    expect(screen.getByTestId("gate-source-blog-tests")).not.toHaveTextContent("edited");
    expect(screen.getByTestId("setup-toml")).toHaveTextContent('mode = "specs"');
    expect(screen.getByTestId("setup-origin")).toHaveTextContent("From kiln.toml");
    expect(screen.getByTestId("setup-done")).toHaveTextContent("Go to sessions");
    // Remembered, and the workspace (now with its kiln.toml) fetched again.
    expect(setupDone("/home/dev/blog")).toBe(true);
    await waitFor(() => expect(stateCalls()).toBeGreaterThan(before));
  });

  it("answers CONFIG_EXISTS with its code and Replace kiln.toml, which sends the same set-up with replace", async () => {
    const sent: SaveConfigArgs[] = [];
    const backend = fakeBackend({
      get_state: () => freshState,
      detect_workspace: () => makeDetection(),
      save_config: (args) => {
        sent.push(args);
        if (!args.replace) throw { code: "CONFIG_EXISTS", message: "/home/dev/blog/kiln.toml already exists" };
        return saved(args);
      },
    });
    renderWithStore(<SetupScreen />, backend);
    await screen.findByTestId("setup-module");

    fireEvent.change(input("gate-command-blog-lint"), { target: { value: "npx eslint ." } });
    fireEvent.click(screen.getByTestId("save-config"));

    const error = await screen.findByTestId("setup-error");
    expect(error).toHaveTextContent("CONFIG_EXISTS");
    expect(error).toHaveTextContent("/home/dev/blog/kiln.toml already exists");
    // The edit is kept.
    expect(input("gate-command-blog-lint")).toHaveValue("npx eslint .");

    fireEvent.click(screen.getByTestId("replace-config"));
    await screen.findByTestId("setup-saved");
    expect(sent).toHaveLength(2);
    expect(sent[0].replace).toBe(false);
    expect(sent[1]).toEqual({ ...sent[0], replace: true });
    expect(sent[1].modules[0].gates.lint).toBe("npx eslint .");
    expect(screen.queryByTestId("setup-error")).not.toBeInTheDocument();
    expect(screen.queryByTestId("replace-config")).not.toBeInTheDocument();
  });

  it("shows any other refusal with its code and offers no Replace", async () => {
    const backend = fakeBackend({
      get_state: () => freshState,
      detect_workspace: () => makeDetection(),
      save_config: () => {
        throw { code: "SESSION_RUNNING", message: "A session's turn is running" };
      },
    });
    renderWithStore(<SetupScreen />, backend);
    await screen.findByTestId("setup-module");
    fireEvent.click(screen.getByTestId("save-config"));
    expect(await screen.findByTestId("setup-error")).toHaveTextContent("SESSION_RUNNING");
    expect(screen.queryByTestId("replace-config")).not.toBeInTheDocument();
    expect(setupDone("/home/dev/blog")).toBe(false);
  });

  it("shows detect_workspace's error with its code, and Retry detects again", async () => {
    let fail = true;
    const backend = fakeBackend({
      get_state: () => freshState,
      detect_workspace: () => {
        if (fail) throw { code: "CONFIG_INVALID", message: "kiln.toml: unknown key `gatez`" };
        return makeDetection();
      },
    });
    renderWithStore(<SetupScreen />, backend);
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("CONFIG_INVALID");
    fail = false;
    fireEvent.click(within(error).getByRole("button", { name: "Retry" }));
    expect(await screen.findByTestId("setup-module")).toBeInTheDocument();
  });

  it("Continue without saving remembers the choice and goes to the dashboard", async () => {
    window.location.hash = "#/workspace/setup";
    const backend = fakeBackend({ get_state: () => freshState, detect_workspace: () => makeDetection() });
    renderWithStore(<SetupScreen />, backend);
    await screen.findByTestId("setup-module");
    fireEvent.click(screen.getByTestId("continue-without-saving"));
    expect(window.location.hash).toBe("#/");
    expect(setupDone("/home/dev/blog")).toBe(true);
    expect(backend.call).not.toHaveBeenCalledWith("save_config", expect.anything());
  });
});

describe("first open of a workspace without kiln.toml", () => {
  it("goes from the dashboard to the set-up, and the dashboard links to it", async () => {
    const backend = fakeBackend({ get_state: () => freshState, detect_workspace: () => makeDetection() });
    renderWithStore(<App />, backend);
    await waitFor(() => expect(window.location.hash).toBe("#/workspace/setup"));
    await act(async () => window.dispatchEvent(new HashChangeEvent("hashchange")));
    expect(await screen.findByTestId("setup-screen")).toBeInTheDocument();

    fireEvent.click(await screen.findByTestId("continue-without-saving"));
    await act(async () => window.dispatchEvent(new HashChangeEvent("hashchange")));
    expect((await screen.findAllByTestId("new-session"))[0]).toBeInTheDocument();
    // Still no kiln.toml: the dashboard offers the review.
    expect(screen.getByTestId("setup-banner")).toHaveTextContent("Set-up: detected from your repository — review");
    expect(screen.getByTestId("setup-link")).toHaveAttribute("href", "#/workspace/setup");
  });

  it("stays on the dashboard once the set-up was dismissed, or when the workspace has a kiln.toml", async () => {
    localStorage.setItem("kiln.setup.done", JSON.stringify(["/home/dev/blog"]));
    const { unmount } = renderWithStore(<App />, fakeBackend({ get_state: () => freshState }));
    expect((await screen.findAllByTestId("new-session"))[0]).toBeInTheDocument();
    expect(window.location.hash).not.toBe("#/workspace/setup");
    expect(screen.getByTestId("setup-banner")).toBeInTheDocument();
    unmount();

    localStorage.clear();
    renderWithStore(<App />, fakeBackend());
    expect((await screen.findAllByTestId("new-session"))[0]).toBeInTheDocument();
    expect(window.location.hash).not.toBe("#/workspace/setup");
    expect(screen.queryByTestId("setup-banner")).not.toBeInTheDocument();
    expect(screen.getByTestId("setup-link")).toHaveAttribute("href", "#/workspace/setup");
  });
});

// Tests for the Gates tab: rows grouped per module with their status (skipped never looks passed, failing before never failed), notes, not-run gates, output head…tail, Run gates, errors and refetches.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { GateResultView } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { useGates } from "../../state/useGates";
import { fakeBackend, makeEntry, makeGate, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { GatesPanel } from "./GatesPanel";

/** The engine's answer, in its own order (module, then gate name). */
const results: GateResultView[] = [
  makeGate(1, {
    module: null,
    gate: "module-schema",
    status: "failed",
    command: "(Kiln checks module-schema)",
    exitCode: null,
    durationMs: 0,
    outputHead: "modules/api/Cargo.toml: no package name",
  }),
  makeGate(2, {
    module: null,
    gate: "spec-schema",
    command: "(Kiln checks spec-schema)",
    exitCode: null,
    durationMs: 0,
    outputHead: "",
  }),
  makeGate(3, { module: "@shop/api", gate: "tests", command: "cargo test -p api", durationMs: 65_000 }),
  makeGate(4, { module: "@shop/cart", gate: "dependencies", command: "npm ci --offline", durationMs: 8100 }),
  makeGate(5, {
    module: "@shop/cart",
    gate: "format",
    status: "skipped",
    command: "",
    exitCode: null,
    durationMs: 0,
    outputHead: "",
  }),
  makeGate(6, { module: "@shop/cart", gate: "tests", command: "npm test", durationMs: 3200 }),
  makeGate(7, {
    module: "@shop/cart",
    gate: "typecheck",
    status: "failed",
    command: "tsc --noEmit",
    exitCode: 2,
    durationMs: 840,
    outputHead: "src/cart.ts(3,1): error TS2304: Cannot find name 'coupon'.\n",
    outputTail: "Found 12 errors in 3 files.\n",
  }),
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function Harness({ running = false }: { running?: boolean }) {
  const gates = useGates({ sessionId: "s1", active: true });
  return <GatesPanel gates={gates} moduleOrder={["@shop/cart", "@shop/api"]} running={running} />;
}

const rows = () => screen.getAllByTestId("gate-row");
const row = (module: string, gate: string) =>
  within(screen.getAllByTestId("gate-group").find((g) => g.getAttribute("data-module") === module)!)
    .getAllByTestId("gate-row")
    .find((r) => r.getAttribute("data-gate") === gate)!;

describe("GatesPanel", () => {
  it("groups the rows per module, the working copy first, each with status, name, duration, command and time", async () => {
    const backend = fakeBackend({ get_gates: () => results });
    renderWithStore(<Harness />, backend);

    await screen.findAllByTestId("gate-row");
    expect(backend.call).toHaveBeenCalledWith("get_gates", { sessionId: "s1" });
    const groups = screen.getAllByTestId("gate-group");
    expect(groups.map((g) => g.getAttribute("data-module"))).toEqual(["", "@shop/cart", "@shop/api"]);
    expect(within(groups[0]).getByRole("heading")).toHaveTextContent("Working copy");
    expect(
      within(groups[0])
        .getAllByTestId("gate-row")
        .map((r) => r.getAttribute("data-gate")),
    ).toEqual(["spec-schema", "module-schema"]);
    expect(
      within(groups[1])
        .getAllByTestId("gate-row")
        .map((r) => r.getAttribute("data-gate")),
    ).toEqual(["dependencies", "typecheck", "tests", "format"]);
    expect(rows().map((r) => r.getAttribute("data-status"))).toEqual([
      "passed",
      "failed",
      "passed",
      "failed",
      "passed",
      "skipped",
      "passed",
    ]);

    const typecheck = row("@shop/cart", "typecheck");
    expect(within(typecheck).getByTestId("gate-status")).toHaveTextContent("failed");
    expect(within(typecheck).getByTestId("gate-status")).toHaveClass("gate-status-failed");
    expect(within(typecheck).getByTestId("gate-name")).toHaveTextContent("typecheck");
    expect(within(typecheck).getByTestId("gate-command")).toHaveTextContent("tsc --noEmit");
    expect(within(typecheck).getByTestId("gate-duration")).toHaveTextContent("840 ms");
    expect(typecheck).toHaveTextContent("exit 2");
    expect(typecheck.querySelector("time")).toHaveAttribute("dateTime", "2025-01-01T10:20:00Z");
    expect(within(row("@shop/cart", "tests")).getByTestId("gate-status")).toHaveClass("gate-status-passed");
    expect(within(row("@shop/api", "tests")).getByTestId("gate-duration")).toHaveTextContent("1 min 5 s");
    expect(screen.getByTestId("gates-summary")).toHaveTextContent("4 passed · 2 failed · 1 skipped");
  });

  it("renders a skipped gate as skipped, never with the passed look", async () => {
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => results }));
    await screen.findAllByTestId("gate-row");

    const format = row("@shop/cart", "format");
    expect(format).toHaveAttribute("data-status", "skipped");
    expect(format).toHaveClass("gate-row-skipped");
    expect(format).not.toHaveClass("gate-row-passed");
    const status = within(format).getByTestId("gate-status");
    expect(status).toHaveTextContent("skipped");
    expect(status).not.toHaveTextContent(/pass/i);
    expect(status).toHaveClass("gate-status-skipped");
    expect(status).not.toHaveClass("gate-status-passed");
    expect(within(format).getByTestId("gate-command")).toHaveTextContent("no command applies");
    expect(within(format).getByTestId("gate-duration")).toHaveTextContent("—");
  });

  it("shows each command's source beside it, small and muted", async () => {
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => results }));
    await screen.findAllByTestId("gate-row");

    const tests = row("@shop/cart", "tests");
    const source = within(tests).getByTestId("gate-source");
    expect(source).toHaveTextContent("package.json scripts.test");
    expect(source).toHaveClass("gate-source", "muted", "small");
    // Beside the command, in the same line.
    expect(within(tests).getByTestId("gate-command").nextElementSibling).toBe(source);
  });

  it("renders a not-configured gate as its own neutral state with the hint, never a failure nor a blocker", async () => {
    const notConfigured = makeGate(8, {
      module: "@shop/cart",
      gate: "lint",
      status: "not-configured",
      command: "",
      source: "nothing detected",
      exitCode: null,
      durationMs: 0,
      outputHead: "No linter configured: add an eslint config or set [gates.node] lint in kiln.toml.",
    });
    const passing = results.filter((g) => g.status === "passed");
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => [...passing, notConfigured] }));
    await screen.findAllByTestId("gate-row");

    const lint = row("@shop/cart", "lint");
    expect(lint).toHaveAttribute("data-status", "not-configured");
    expect(lint).toHaveClass("gate-row-not-configured");
    expect(lint).not.toHaveClass("gate-row-failed");
    expect(lint).not.toHaveClass("gate-row-passed");
    const status = within(lint).getByTestId("gate-status");
    expect(status).toHaveTextContent("not configured");
    expect(status).toHaveClass("gate-status-not-configured");
    expect(status).not.toHaveClass("gate-status-failed");
    expect(within(lint).getByTestId("gate-hint")).toHaveTextContent("No linter configured: add an eslint config");
    expect(within(lint).getByTestId("gate-source")).toHaveTextContent("nothing detected");
    // Nothing ran: no duration, no exit code, no output to open.
    expect(within(lint).queryByTestId("gate-duration")).not.toBeInTheDocument();
    expect(within(lint).queryByTestId("gate-output-toggle")).not.toBeInTheDocument();
    expect(lint).not.toHaveTextContent(/exit/);
    // Lint comes last in its module's gates, and the group is not marked failed.
    const cart = screen.getAllByTestId("gate-group").find((g) => g.getAttribute("data-module") === "@shop/cart")!;
    expect(
      within(cart)
        .getAllByTestId("gate-row")
        .map((r) => r.getAttribute("data-gate")),
    ).toEqual(["dependencies", "tests", "lint"]);
    expect(within(cart).getByRole("heading")).not.toHaveClass("gate-group-failed");
    expect(screen.getByTestId("gates-summary")).toHaveTextContent("4 passed · 1 not configured");
    expect(screen.getByTestId("gates-summary")).not.toHaveTextContent(/failed/);
  });

  it("renders a failing-before gate as its own state with its note, never counted as failed", async () => {
    const before = makeGate(8, {
      module: "@shop/cart",
      gate: "tests",
      status: "failing-before",
      exitCode: 1,
      outputHead: "not ok 2 - applies a coupon\n",
      note: "2 failures, all there before this session",
    });
    const passing = results.filter((g) => g.status === "passed" && !(g.module === "@shop/cart" && g.gate === "tests"));
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => [...passing, before] }));
    await screen.findAllByTestId("gate-row");

    const tests = row("@shop/cart", "tests");
    expect(tests).toHaveAttribute("data-status", "failing-before");
    expect(tests).toHaveClass("gate-row-failing-before");
    expect(tests).not.toHaveClass("gate-row-failed");
    const status = within(tests).getByTestId("gate-status");
    expect(status).toHaveTextContent("failing before");
    expect(status).toHaveClass("gate-status-failing-before");
    expect(status).not.toHaveClass("gate-status-failed");
    expect(within(tests).getByTestId("gate-note")).toHaveTextContent("2 failures, all there before this session");
    // It ran: its duration and exit code show.
    expect(within(tests).getByTestId("gate-duration")).toHaveTextContent("3.2 s");
    expect(tests).toHaveTextContent("exit 1");
    const cart = screen.getAllByTestId("gate-group").find((g) => g.getAttribute("data-module") === "@shop/cart")!;
    expect(within(cart).getByRole("heading")).not.toHaveClass("gate-group-failed");
    expect(screen.getByTestId("gates-summary")).toHaveTextContent("3 passed · 1 failing before");
    expect(screen.getByTestId("gates-summary")).not.toHaveTextContent(/failed/);
  });

  it("shows a failed gate's note: which failures are new, which were there before", async () => {
    const failed = makeGate(8, {
      gate: "tests",
      status: "failed",
      exitCode: 1,
      note: "1 new failure: `tests::adds`; 2 more were there before this session",
    });
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => [failed] }));
    const note = await screen.findByTestId("gate-note");
    expect(note).toHaveTextContent("1 new failure: tests::adds; 2 more were there before this session");
    expect(within(note).getByText("tests::adds").tagName).toBe("CODE");
    expect(screen.getByTestId("gates-summary")).toHaveTextContent("1 failed");
  });

  it("reads not run, with why, for a gate its failed setup kept from running", async () => {
    const deps = makeGate(8, {
      gate: "dependencies",
      status: "failed",
      command: "npm ci",
      exitCode: 1,
      outputHead: "npm ERR! 404 left-pad",
    });
    const why = "not run: setup failed: npm ERR! 404 left-pad";
    const tests = makeGate(9, {
      gate: "tests",
      status: "skipped",
      exitCode: null,
      durationMs: 0,
      outputHead: why,
      note: why,
    });
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => [deps, tests] }));
    await screen.findAllByTestId("gate-row");

    const skipped = row("@shop/cart", "tests");
    expect(skipped).toHaveAttribute("data-status", "skipped");
    const status = within(skipped).getByTestId("gate-status");
    expect(status).toHaveTextContent("not run");
    expect(status).not.toHaveTextContent("skipped");
    expect(status).toHaveClass("gate-status-skipped", "gate-status-not-run");
    expect(within(skipped).getByTestId("gate-note")).toHaveTextContent("setup failed: npm ERR! 404 left-pad");
    expect(within(skipped).getByTestId("gate-duration")).toHaveTextContent("—");
    // A plain skipped gate has no note.
    expect(within(row("@shop/cart", "dependencies")).queryByTestId("gate-note")).toBeNull();
  });

  it("toggles the output: head, then …, then the tail; the head alone when the tail is empty", async () => {
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => results }));
    await screen.findAllByTestId("gate-row");

    const typecheck = row("@shop/cart", "typecheck");
    const toggle = within(typecheck).getByTestId("gate-output-toggle");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(within(typecheck).queryByTestId("gate-output")).not.toBeInTheDocument();

    fireEvent.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    const output = within(typecheck).getByTestId("gate-output");
    expect(output.tagName).toBe("PRE");
    expect(output).toHaveClass("gate-output");
    expect(output.textContent).toBe(
      "src/cart.ts(3,1): error TS2304: Cannot find name 'coupon'.\n…\nFound 12 errors in 3 files.\n",
    );
    expect(within(output).getByTestId("gate-output-head")).toHaveTextContent("error TS2304");
    expect(within(output).getByTestId("gate-output-tail")).toHaveTextContent("Found 12 errors");

    fireEvent.click(toggle);
    expect(within(typecheck).queryByTestId("gate-output")).not.toBeInTheDocument();

    // No tail: the head alone, without the gap.
    const schema = row("", "module-schema");
    fireEvent.click(within(schema).getByTestId("gate-output-toggle"));
    expect(within(schema).getByTestId("gate-output").textContent).toBe("modules/api/Cargo.toml: no package name");
    expect(within(schema).queryByTestId("gate-output-gap")).not.toBeInTheDocument();

    // No output at all.
    const format = row("@shop/cart", "format");
    fireEvent.click(within(format).getByTestId("gate-output-toggle"));
    expect(within(format).getByTestId("gate-output")).toHaveTextContent("No output.");
  });

  it("says when no gate has run yet", async () => {
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => [] }));
    expect(await screen.findByTestId("gates-empty")).toHaveTextContent("Not run yet");
    expect(screen.getByTestId("gates-not-run")).toHaveAttribute("data-state", "not-run");
    expect(screen.queryByTestId("gate-row")).not.toBeInTheDocument();
  });

  it("says not run yet when only Kiln's working-copy checks ran, and shows no counts as a pass", async () => {
    const schema = [
      makeGate(1, { module: null, gate: "module-schema", command: "(Kiln checks module-schema)", durationMs: 0 }),
    ];
    renderWithStore(<Harness />, fakeBackend({ get_gates: () => schema }));
    expect(await screen.findByTestId("gates-not-run")).toHaveTextContent(
      "Not run yet. Only Kiln's own checks of the working copy ran",
    );
    expect(screen.getAllByTestId("gate-row")).toHaveLength(1);
  });

  it("says not run on these files when a restore came after the last gate run and the results do not say what they judged", async () => {
    const entries = [
      makeEntry(1, { kind: "gate", text: "**tests** passed" }),
      makeEntry(2, { kind: "system", text: "Restored the workspace to the state after the starting point (turn 0)." }),
    ];
    function Restored() {
      const gates = useGates({ sessionId: "s1", active: true });
      return <GatesPanel gates={gates} running={false} entries={entries} />;
    }
    renderWithStore(<Restored />, fakeBackend({ get_gates: () => [makeGate(1)] }));
    const note = await screen.findByTestId("gates-not-run");
    expect(note).toHaveAttribute("data-state", "stale");
    expect(note).toHaveTextContent("Not run on the files as they are");
    // The old pass is not counted as one.
    expect(screen.queryByTestId("gates-summary")).not.toBeInTheDocument();
  });

  it("trusts what each result says it judged over the restore line: the restored files' results count", async () => {
    const entries = [
      makeEntry(1, { kind: "gate", text: "**tests** passed" }),
      makeEntry(2, { kind: "system", text: "Restored the session's working copy to the state after turn 1." }),
    ];
    function Restored() {
      const gates = useGates({ sessionId: "s1", active: true });
      return <GatesPanel gates={gates} running={false} entries={entries} />;
    }
    const { unmount } = renderWithStore(
      <Restored />,
      fakeBackend({ get_gates: () => [makeGate(1, { current: true })] }),
    );
    expect(await screen.findByTestId("gates-summary")).toHaveTextContent("1 passed");
    expect(screen.queryByTestId("gates-not-run")).not.toBeInTheDocument();
    unmount();

    // A result of other files (an edit since, no restore line needed): not counted.
    renderWithStore(<Restored />, fakeBackend({ get_gates: () => [makeGate(1, { current: false })] }));
    expect(await screen.findByTestId("gates-not-run")).toHaveAttribute("data-state", "stale");
    expect(screen.queryByTestId("gates-summary")).not.toBeInTheDocument();
  });

  it("Run gates calls check_modules, shows it running, then its results", async () => {
    const run = deferred<GateResultView[]>();
    const backend = fakeBackend({ get_gates: () => [], check_modules: () => run.promise });
    renderWithStore(<Harness />, backend);
    await screen.findByTestId("gates-empty");

    const button = screen.getByTestId("check-modules");
    expect(button).toHaveTextContent("Run gates");
    fireEvent.click(button);
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("check_modules", { sessionId: "s1" }));
    expect(button).toBeDisabled();
    expect(button).toHaveAttribute("data-state", "running");
    expect(button).toHaveTextContent("Running gates…");

    await act(async () => run.resolve(results));
    expect(await screen.findAllByTestId("gate-row")).toHaveLength(7);
    expect(button).toBeEnabled();
    expect(button).toHaveAttribute("data-state", "idle");
    expect(screen.queryByTestId("gates-empty")).not.toBeInTheDocument();
  });

  it("keeps check_modules' results over an older get_gates answer that arrives later", async () => {
    const first = deferred<GateResultView[]>();
    const backend = fakeBackend({ get_gates: () => first.promise, check_modules: () => results });
    renderWithStore(<Harness />, backend);

    fireEvent.click(screen.getByTestId("check-modules"));
    expect(await screen.findAllByTestId("gate-row")).toHaveLength(7);
    await act(async () => first.resolve([makeGate(99, { status: "failed" })]));
    expect(rows()).toHaveLength(7);
  });

  it("is disabled while the session runs", async () => {
    renderWithStore(<Harness running />, fakeBackend({ get_gates: () => results }));
    await screen.findAllByTestId("gate-row");
    expect(screen.getByTestId("check-modules")).toBeDisabled();
    expect(screen.getByTestId("gates-panel")).toHaveTextContent("Gates can be checked once the turn ends.");
  });

  it("shows check_modules' error inline with its code, and keeps the results", async () => {
    const backend = fakeBackend({
      get_gates: () => results,
      check_modules: () => {
        throw { code: "SESSION_RUNNING", message: "check the modules when the session stops" };
      },
    });
    renderWithStore(<Harness />, backend);
    await screen.findAllByTestId("gate-row");

    fireEvent.click(screen.getByTestId("check-modules"));
    const error = await screen.findByTestId("check-modules-error");
    expect(error).toHaveTextContent("check the modules when the session stops");
    expect(error).toHaveTextContent("SESSION_RUNNING");
    expect(rows()).toHaveLength(7);
    expect(screen.getByTestId("check-modules")).toBeEnabled();
  });

  it("shows get_gates' error with its code, and Retry fetches again", async () => {
    let fail = true;
    const backend = fakeBackend({
      get_gates: () => {
        if (fail) throw { code: "SESSION_NOT_FOUND", message: "No session s1" };
        return results;
      },
    });
    renderWithStore(<Harness />, backend);
    const error = await screen.findByTestId("gates-error");
    expect(error).toHaveTextContent("No session s1");
    expect(error).toHaveTextContent("SESSION_NOT_FOUND");

    fail = false;
    fireEvent.click(within(error).getByRole("button", { name: "Retry" }));
    await screen.findAllByTestId("gate-row");
    expect(screen.queryByTestId("gates-error")).not.toBeInTheDocument();
  });
});

describe("Gates tab in the session", () => {
  const session = makeSession({ state: "editing" });

  it("opens the gates panel, fetching again on open, with the failures counted on the tab label", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [makeEntry(1)],
      get_gates: () => results,
    });
    const gateCalls = () => backend.call.mock.calls.filter(([c]) => c === "get_gates").length;
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findAllByTestId("entry");

    // Fetched with the session, so the label can tell before the tab is opened.
    const tab = screen.getByTestId("tab-gates");
    await waitFor(() => expect(within(tab).getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "failed"));
    expect(within(tab).getByTestId("tab-gates-summary")).toHaveTextContent("2");
    expect(tab).toHaveAccessibleName("Gates 2 failed");
    expect(screen.queryByTestId("gates-panel")).not.toBeInTheDocument();
    const before = gateCalls();

    fireEvent.click(tab);
    expect(tab).toHaveAttribute("aria-selected", "true");
    expect(await screen.findByTestId("gates-panel")).toBeVisible();
    expect(screen.getByRole("tabpanel", { name: "Gates 2 failed" })).toContainElement(
      screen.getByTestId("gates-panel"),
    );
    await waitFor(() => expect(gateCalls()).toBe(before + 1));
    expect(screen.getAllByTestId("gate-row")).toHaveLength(7);
    expect(screen.getByTestId("transcript")).not.toBeVisible();

    fireEvent.click(screen.getByTestId("tab-chat"));
    expect(screen.getByTestId("gates-panel")).not.toBeVisible();
  });

  it("counts gates failing before on the label apart from failures, never as a pass", async () => {
    const answer = [makeGate(1, { gate: "typecheck" }), makeGate(2, { status: "failing-before", exitCode: 1 })];
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], get_gates: () => answer });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await waitFor(() =>
      expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "failing-before"),
    );
    expect(screen.getByTestId("tab-gates-summary")).toHaveTextContent("1");
    expect(screen.getByTestId("tab-gates-summary")).toHaveClass("tab-badge-before");
    expect(screen.getByTestId("tab-gates-summary")).not.toHaveClass("tab-badge-failed");
    expect(screen.getByTestId("tab-gates")).toHaveAccessibleName("Gates 1 failing before");
  });

  it("shows a check on the label when every gate that ran passed, and not run for skipped gates alone", async () => {
    let answer: GateResultView[] = [makeGate(1, { status: "skipped" })];
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => [], get_gates: () => answer });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findByRole("heading", { name: session.title });
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("get_gates", { sessionId: "s1" }));
    await waitFor(() => expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "not-run"));
    expect(screen.getByTestId("tab-gates-summary")).not.toHaveClass("tab-badge-passed");

    answer = [makeGate(1, { status: "skipped" }), makeGate(2, { gate: "typecheck" })];
    fireEvent.click(screen.getByTestId("tab-gates"));
    await waitFor(() => expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "passed"));
  });

  it("claims no pass before any gate ran, nor after a restore", async () => {
    let answer: GateResultView[] = [];
    let entries = [makeEntry(1)];
    const backend = fakeBackend({ get_session: () => session, get_transcript: () => entries, get_gates: () => answer });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await waitFor(() => expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "not-run"));

    // A turn's gates passed (their event carries the results), then the files were restored.
    answer = [makeGate(1)];
    act(() => {
      backend.emit({
        id: 59,
        at: "2025-01-01T10:31:00Z",
        body: { type: "transcript", entry: makeEntry(2, { kind: "gate", text: "**tests** passed" }) },
      });
      backend.emit({ id: 60, at: "2025-01-01T10:31:00Z", body: { type: "gates", sessionId: "s1", gates: answer } });
    });
    await waitFor(() => expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "passed"), {
      timeout: 3000,
    });
    entries = [makeEntry(1), makeEntry(2, { kind: "gate" })];
    act(() =>
      backend.emit({
        id: 61,
        at: "2025-01-01T10:32:00Z",
        body: {
          type: "transcript",
          entry: makeEntry(3, {
            kind: "system",
            text: "Restored the workspace to the state after the starting point (turn 0).",
          }),
        },
      }),
    );
    await waitFor(() => expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "stale"));
    fireEvent.click(screen.getByTestId("tab-gates"));
    expect(await screen.findByTestId("gates-not-run")).toHaveTextContent("Not run on the files as they are");
  });

  it("takes the results from a gates event without asking, and asks again after a checkpoint", async () => {
    let answer = [makeGate(1)];
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [makeEntry(1)],
      get_gates: () => answer,
    });
    const gateCalls = () => backend.call.mock.calls.filter(([c]) => c === "get_gates").length;
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findAllByTestId("entry");
    fireEvent.click(screen.getByTestId("tab-gates"));
    await screen.findAllByTestId("gate-row");
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("get_gates", { sessionId: "s1" }));
    await sleep(100);
    const settled = gateCalls();

    // A gate entry alone asks nothing: the results come with their own event.
    act(() =>
      backend.emit({
        id: 51,
        at: "2025-01-01T10:31:00Z",
        body: { type: "transcript", entry: makeEntry(3, { kind: "gate", text: "**typecheck** failed" }) },
      }),
    );
    const ran = [makeGate(1), makeGate(2, { gate: "typecheck", status: "failed" })];
    act(() =>
      backend.emit({ id: 52, at: "2025-01-01T10:31:01Z", body: { type: "gates", sessionId: "s1", gates: ran } }),
    );
    await waitFor(() => expect(screen.getAllByTestId("gate-row")).toHaveLength(2));
    expect(screen.getByTestId("tab-gates-summary")).toHaveTextContent("1");
    // Another session's results are not this one's.
    act(() =>
      backend.emit({ id: 53, at: "2025-01-01T10:31:02Z", body: { type: "gates", sessionId: "s2", gates: [] } }),
    );
    await sleep(100);
    expect(screen.getAllByTestId("gate-row")).toHaveLength(2);
    expect(gateCalls()).toBe(settled);

    // A checkpoint changed the files: which results judged them is asked again.
    answer = [makeGate(1, { current: false }), makeGate(2, { gate: "typecheck", status: "failed", current: false })];
    act(() =>
      backend.emit({
        id: 54,
        at: "2025-01-01T10:32:00Z",
        body: { type: "checkpoint", sessionId: "s1", sequence: 2, restored: true },
      }),
    );
    await waitFor(() => expect(gateCalls()).toBe(settled + 1));
    await waitFor(() => expect(screen.getByTestId("tab-gates-summary")).toHaveAttribute("data-state", "stale"));
  });
});

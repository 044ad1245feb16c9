// Tests for the Changes panel: files with status and counts, the module filter (get_diff's moduleId) and its absence in a one-package repository, a file marked in conflict, placeholders, unified/split, states and refetches.
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import type { DiffView, GetDiffArgs, SessionModule } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { StoreProvider } from "../../state/store";
import { fakeBackend, makeCheckpoint, makeEntry, makeFileDiff, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { DiffPanel } from "./DiffPanel";
import { ModuleWordsContext } from "../../lib/moduleWords";

const modules: SessionModule[] = [
  { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
  { id: "@shop/coupons", directory: "modules/coupons", kind: "new", joinedAt: "2025-01-01T10:01:00Z", baseSequence: 1 },
];

const cart = {
  moduleId: "@shop/cart",
  directory: "modules/cart",
  group: "module" as const,
  baseSequence: 0,
  files: [
    makeFileDiff("modules/cart/src/cart.ts", { additions: 12, deletions: 3 }),
    makeFileDiff("modules/cart/src/old.ts", { status: "deleted", additions: 0, deletions: 40 }),
    makeFileDiff("modules/cart/src/total.ts", {
      status: "renamed",
      oldPath: "modules/cart/src/sum.ts",
      additions: 1,
      deletions: 1,
    }),
    makeFileDiff("modules/cart/logo.png", { binary: true, additions: 0, deletions: 0, hunks: [] }),
  ],
};

const coupons = {
  moduleId: "@shop/coupons",
  directory: "modules/coupons",
  group: "module" as const,
  baseSequence: 1,
  files: [
    makeFileDiff("modules/coupons/src/index.ts", { status: "added", additions: 5, deletions: 0 }),
    makeFileDiff("modules/coupons/data/codes.json", {
      status: "added",
      tooLarge: true,
      additions: 90000,
      deletions: 0,
      hunks: [],
    }),
  ],
};

/** get_diff answering from the two modules, filtered by moduleId as the engine does. */
function getDiff(args: GetDiffArgs): DiffView {
  const all = [cart, coupons];
  return { modules: args.moduleId ? all.filter((m) => m.moduleId === args.moduleId) : all };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function files() {
  return screen.getAllByTestId("diff-file");
}

describe("DiffPanel", () => {
  it("lists every module's files with status letter and +/− counts, and shows the first file's diff", async () => {
    const backend = fakeBackend({ get_diff: getDiff });
    renderWithStore(<DiffPanel sessionId="s1" modules={modules} />, backend);

    await screen.findAllByTestId("diff-file");
    expect(backend.call).toHaveBeenCalledWith("get_diff", { sessionId: "s1" });
    expect(files().map((f) => within(f).getByTestId("diff-status").textContent)).toEqual([
      "M",
      "D",
      "R",
      "M",
      "A",
      "A",
    ]);
    expect(files().map((f) => f.getAttribute("data-status"))).toEqual([
      "modified",
      "deleted",
      "renamed",
      "modified",
      "added",
      "added",
    ]);
    expect(within(files()[0]).getByTestId("diff-additions")).toHaveTextContent("+12");
    expect(within(files()[0]).getByTestId("diff-deletions")).toHaveTextContent("−3");
    // Paths below their module's directory; a rename shows where it came from.
    expect(files()[0]).toHaveTextContent("src/cart.ts");
    expect(files()[2]).toHaveTextContent("src/sum.ts → src/total.ts");
    expect(screen.getByTestId("diff-summary")).toHaveTextContent("6 files +90018 −44");

    const viewer = screen.getByTestId("file-diff");
    expect(viewer).toHaveAttribute("data-path", "modules/cart/src/cart.ts");
    expect(files()[0]).toHaveAttribute("aria-current", "true");
    expect(viewer.querySelector("table.diff")).not.toBeNull();
    expect(viewer).toHaveTextContent("const b = 3;");
    expect(viewer).toHaveTextContent("@@ -1,3 +1,3 @@");
    // Syntax tokens from refractor.
    expect(viewer.querySelector(".token.keyword")).toHaveTextContent("const");
  });

  it("names no module in a one-package repository: no filter, no group heading, and marks a file in conflict", async () => {
    const one = { ...cart, moduleId: "greet", directory: ".", files: [makeFileDiff("greet.js")] };
    const backend = fakeBackend({ get_diff: () => ({ modules: [one] }), get_conflicts: () => ({ files: [] }) });
    renderWithStore(
      <ModuleWordsContext.Provider value={false}>
        <DiffPanel sessionId="s1" modules={[]} conflicts={["greet.js"]} />
      </ModuleWordsContext.Provider>,
      backend,
    );
    await screen.findAllByTestId("diff-file");
    expect(screen.queryByTestId("diff-module")).toBeNull();
    expect(screen.queryByTestId("diff-group-label")).toBeNull();
    expect(within(files()[0]).getByTestId("diff-file-conflict")).toHaveTextContent("conflict");
  });

  it("shows placeholders for binary and too-large files", async () => {
    renderWithStore(<DiffPanel sessionId="s1" modules={modules} />, fakeBackend({ get_diff: getDiff }));
    await screen.findAllByTestId("diff-file");

    fireEvent.click(files()[3]);
    expect(screen.getByTestId("diff-binary")).toHaveTextContent("Binary file");
    expect(screen.getByTestId("file-diff").querySelector("table")).toBeNull();

    fireEvent.click(files()[5]);
    expect(screen.getByTestId("diff-too-large")).toHaveTextContent("Too large to show");
    expect(screen.queryByTestId("diff-binary")).not.toBeInTheDocument();
  });

  it("filters by module by calling get_diff with its moduleId", async () => {
    const backend = fakeBackend({ get_diff: getDiff });
    renderWithStore(<DiffPanel sessionId="s1" modules={modules} />, backend);
    await screen.findAllByTestId("diff-file");

    const select = screen.getByTestId("diff-module");
    expect([...select.querySelectorAll("option")].map((o) => o.textContent)).toEqual([
      "All modules",
      "@shop/cart",
      "@shop/coupons",
    ]);
    fireEvent.change(select, { target: { value: "@shop/coupons" } });
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("get_diff", { sessionId: "s1", moduleId: "@shop/coupons" }),
    );
    await waitFor(() => expect(files()).toHaveLength(2));
    expect(files().map((f) => f.getAttribute("data-path"))).toEqual([
      "modules/coupons/src/index.ts",
      "modules/coupons/data/codes.json",
    ]);
    expect(screen.getByTestId("file-diff")).toHaveAttribute("data-path", "modules/coupons/src/index.ts");

    fireEvent.change(select, { target: { value: "" } });
    await waitFor(() => expect(files()).toHaveLength(6));
  });

  it("shows the direct workflow's other groups: the repository root and a changed module not in the session, each filterable", async () => {
    const orders = {
      moduleId: "@shop/orders",
      directory: "modules/orders",
      group: "other-module" as const,
      baseSequence: 0,
      files: [makeFileDiff("modules/orders/src/a.ts")],
    };
    const root = {
      moduleId: "(repository)",
      directory: "",
      group: "outside" as const,
      baseSequence: 0,
      files: [
        makeFileDiff("pnpm-lock.yaml", { additions: 2, deletions: 1 }),
        makeFileDiff(".github/workflows/ci.yml", { status: "added" }),
      ],
    };
    const all = [cart, orders, root];
    const backend = fakeBackend({
      get_diff: (args) => ({ modules: args.moduleId ? all.filter((m) => m.moduleId === args.moduleId) : all }),
    });
    renderWithStore(<DiffPanel sessionId="s1" modules={modules} />, backend);
    await screen.findAllByTestId("diff-file");

    const group = (id: string) => document.querySelector(`.diff-module-group[data-module="${id}"]`) as HTMLElement;
    expect(group("(repository)")).toHaveAttribute("data-group", "outside");
    expect(within(group("(repository)")).getByTestId("diff-group-label")).toHaveTextContent(
      "Repository root (outside every module)",
    );
    // Root paths are shown whole.
    expect(within(group("(repository)")).getAllByTestId("diff-file")[0]).toHaveTextContent("pnpm-lock.yaml");
    expect(within(group("(repository)")).getAllByTestId("diff-file")[1]).toHaveTextContent(".github/workflows/ci.yml");
    expect(group("@shop/orders")).toHaveTextContent("not in the session");
    expect(within(group("@shop/cart")).getByTestId("diff-group-label")).toHaveTextContent("@shop/cart");

    // The filter offers the session's modules, then the other groups the diff has.
    const select = screen.getByTestId("diff-module") as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual([
      "All modules",
      "@shop/cart",
      "@shop/coupons",
      "@shop/orders (not in the session)",
      "Repository root (outside every module)",
    ]);
    fireEvent.change(select, { target: { value: "(repository)" } });
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("get_diff", { sessionId: "s1", moduleId: "(repository)" }),
    );
    await waitFor(() => expect(files()).toHaveLength(2));
    expect(screen.getByTestId("diff-summary")).toHaveTextContent("2 files");
  });

  it("switches between unified and split views", async () => {
    renderWithStore(<DiffPanel sessionId="s1" modules={modules} />, fakeBackend({ get_diff: getDiff }));
    await screen.findAllByTestId("diff-file");
    const table = () => screen.getByTestId("file-diff").querySelector("table.diff")!;

    const toggle = screen.getByTestId("diff-mode");
    expect(toggle).toHaveAttribute("aria-pressed", "false");
    expect(screen.getByTestId("diff-panel")).toHaveAttribute("data-mode", "unified");
    expect(table()).toHaveClass("diff-unified");

    fireEvent.click(toggle);
    expect(toggle).toHaveAttribute("aria-pressed", "true");
    expect(screen.getByTestId("diff-panel")).toHaveAttribute("data-mode", "split");
    expect(table()).toHaveClass("diff-split");
    // Side by side: the deleted and the added line share a row.
    const row = [...table().querySelectorAll("tr")].find((tr) => tr.textContent?.includes("const b = 2;"));
    expect(row).toHaveTextContent("const b = 3;");

    fireEvent.click(toggle);
    expect(table()).toHaveClass("diff-unified");
  });

  it("says when there are no changes yet", async () => {
    renderWithStore(
      <DiffPanel sessionId="s1" modules={modules} />,
      fakeBackend({ get_diff: () => ({ modules: [{ ...cart, files: [] }] }) }),
    );
    expect(await screen.findByTestId("diff-empty")).toHaveTextContent("No changes yet");
    expect(screen.queryByTestId("diff-file")).not.toBeInTheDocument();
  });

  it("shows a loading state, then an error with its code, and Retry fetches again", async () => {
    let fail = true;
    const backend = fakeBackend({
      get_diff: (args) => {
        if (fail) throw { code: "SESSION_NOT_FOUND", message: "No session s1" };
        return getDiff(args);
      },
    });
    renderWithStore(<DiffPanel sessionId="s1" modules={modules} />, backend);
    expect(screen.getByRole("status")).toHaveTextContent("Loading changes…");
    const error = await screen.findByTestId("diff-error");
    expect(error).toHaveTextContent("No session s1");
    expect(error).toHaveTextContent("SESSION_NOT_FOUND");

    fail = false;
    fireEvent.click(within(error).getByRole("button", { name: "Retry" }));
    await screen.findAllByTestId("diff-file");
    expect(screen.queryByTestId("diff-error")).not.toBeInTheDocument();
  });

  it("fetches again, debounced, when the refresh key changes, and not while inactive", async () => {
    const backend = fakeBackend({ get_diff: getDiff });
    const diffCalls = () => backend.call.mock.calls.filter(([c]) => c === "get_diff").length;
    const wrapper = ({ children }: { children: ReactNode }) => (
      <StoreProvider backend={backend}>{children}</StoreProvider>
    );
    const panel = (key: number, active = true) => (
      <DiffPanel sessionId="s1" modules={modules} refreshKey={key} active={active} debounceMs={30} />
    );
    const view = render(panel(1), { wrapper });
    await screen.findAllByTestId("diff-file");
    expect(diffCalls()).toBe(1);

    // A burst of changes: one fetch once it settles.
    view.rerender(panel(2));
    view.rerender(panel(3));
    await waitFor(() => expect(diffCalls()).toBe(2));
    await sleep(80);
    expect(diffCalls()).toBe(2);

    // Hidden: changes wait; shown again: fetched at once.
    view.rerender(panel(4, false));
    await sleep(80);
    expect(diffCalls()).toBe(2);
    view.rerender(panel(4, true));
    await waitFor(() => expect(diffCalls()).toBe(3));
  });
});

describe("Changes tab in the session", () => {
  const session = makeSession({ modules, checkpoints: [makeCheckpoint(0), makeCheckpoint(1, { entryId: 2 })] });

  it("opens the diff panel from the Changes tab and keeps the chat's transcript hidden meanwhile", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [makeEntry(1), makeEntry(2, { kind: "handoff" })],
      get_diff: getDiff,
    });
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findAllByTestId("entry");
    expect(screen.getByTestId("tab-chat")).toHaveAttribute("aria-selected", "true");
    expect(screen.queryByTestId("diff-panel")).not.toBeInTheDocument();
    expect(backend.call).not.toHaveBeenCalledWith("get_diff", expect.anything());

    fireEvent.click(screen.getByTestId("tab-changes"));
    expect(screen.getByTestId("tab-changes")).toHaveAttribute("aria-selected", "true");
    expect(await screen.findByTestId("diff-panel")).toBeVisible();
    await screen.findAllByTestId("diff-file");
    expect(screen.getByTestId("transcript")).not.toBeVisible();

    fireEvent.click(screen.getByTestId("tab-chat"));
    expect(screen.getByTestId("transcript")).toBeVisible();
    expect(screen.getByTestId("diff-panel")).not.toBeVisible();

    // Arrow keys move between the tabs.
    fireEvent.keyDown(screen.getByTestId("tab-chat"), { key: "ArrowRight" });
    expect(screen.getByTestId("tab-changes")).toHaveAttribute("aria-selected", "true");
    expect(screen.getByTestId("tab-changes")).toHaveFocus();
    expect(screen.getByRole("tabpanel", { name: "Changes" })).toContainElement(screen.getByTestId("diff-panel"));
  });

  it("fetches the diff again when the transcript grows and when a checkpoint is restored to", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [makeEntry(1), makeEntry(2, { kind: "handoff" })],
      get_diff: getDiff,
      restore_checkpoint: () => session,
    });
    const diffCalls = () => backend.call.mock.calls.filter(([c]) => c === "get_diff").length;
    renderWithStore(<SessionScreen sessionId="s1" />, backend);
    await screen.findAllByTestId("entry");
    fireEvent.click(screen.getByTestId("tab-changes"));
    await screen.findAllByTestId("diff-file");
    expect(diffCalls()).toBe(1);

    act(() => {
      backend.emit({
        id: 40,
        at: "2025-01-01T10:30:00Z",
        body: { type: "transcript", entry: makeEntry(3, { kind: "tool", text: "**edit** `Write a.ts`" }) },
      });
      backend.emit({
        id: 41,
        at: "2025-01-01T10:30:01Z",
        body: { type: "transcript", entry: makeEntry(4, { kind: "tool", text: "**edit** `Write b.ts`" }) },
      });
    });
    // Debounced: the two entries make one fetch.
    await waitFor(() => expect(diffCalls()).toBe(2), { timeout: 2000 });

    fireEvent.click(within(screen.getByTestId("checkpoints")).getAllByTestId("restore-checkpoint")[1]);
    fireEvent.click(screen.getByTestId("confirm-restore"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("restore_checkpoint", { sessionId: "s1", sequence: 1 }),
    );
    // The engine says the files are a checkpoint's now (the restore's answer alone does not).
    act(() =>
      backend.emit({
        id: 42,
        at: "2025-01-01T10:31:00Z",
        body: { type: "checkpoint", sessionId: "s1", sequence: 1, restored: true },
      }),
    );
    await waitFor(() => expect(diffCalls()).toBe(3), { timeout: 2000 });
  });
});

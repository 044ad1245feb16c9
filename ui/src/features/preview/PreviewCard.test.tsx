// Tests for the preview card in the session view: Preview starts it, states and events, module switching (frame and diff filter), crash with log, reload, restart, stop, open, errors.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PreviewView } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { fakeBackend, makePreview, makeSession, PREVIEW_SECRET } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";

const session = makeSession({
  state: "editing",
  modules: [
    { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
    {
      id: "@shop/coupons",
      directory: "modules/coupons",
      kind: "new",
      joinedAt: "2025-01-01T10:01:00Z",
      baseSequence: 2,
    },
  ],
});

const moduleUrls = [
  { moduleId: "@shop/cart", path: "/?module=cart" },
  { moduleId: "@shop/coupons", path: "/?module=coupons" },
];

const cartUrl = `http://127.0.0.1:41234/__kiln/enter?secret=${PREVIEW_SECRET}&to=%2F%3Fmodule%3Dcart`;
const couponsUrl = `http://127.0.0.1:41234/__kiln/enter?secret=${PREVIEW_SECRET}&to=%2F%3Fmodule%3Dcoupons`;

function preview(overrides: Partial<PreviewView> = {}): PreviewView {
  return makePreview({ moduleUrls, ...overrides });
}

let eventId = 100;
function previewEvent(p: PreviewView) {
  eventId += 1;
  return { id: eventId, at: "2025-01-01T10:30:00Z", body: { type: "preview" as const, preview: p } };
}

/** The session screen with a backend whose start_preview answers `starting` (unless told otherwise). */
function setup(handlers: Parameters<typeof fakeBackend>[0] = {}) {
  const backend = fakeBackend({
    get_session: () => session,
    get_transcript: () => [],
    get_diff: () => ({ modules: [] }),
    start_preview: () => preview({ state: "starting", port: null, log: [] }),
    stop_preview: () => preview({ state: "stopped", origin: null, enterUrl: null, message: "stopped" }),
    restart_preview: () => preview({ state: "starting", log: [] }),
    ...handlers,
  });
  renderWithStore(<SessionScreen sessionId="s1" />, backend);
  return backend;
}

async function openCard() {
  fireEvent.click(await screen.findByTestId("preview-button"));
  return screen.findByTestId("preview-card");
}

afterEach(() => vi.restoreAllMocks());

describe("PreviewCard", () => {
  it("Preview starts the preview: Starting… without a frame, then Ready with the first module's entry URL", async () => {
    const backend = setup();
    expect(screen.queryByTestId("preview-card")).toBeNull();
    await openCard();
    expect(backend.call).toHaveBeenCalledWith("start_preview", { sessionId: "s1" });
    await waitFor(() => expect(screen.getByTestId("preview-state")).toHaveTextContent("Starting…"));
    expect(screen.queryByTestId("preview-frame")).toBeNull();
    expect(screen.getByTestId("preview-reload")).toBeDisabled();

    act(() => backend.emit(previewEvent(preview())));
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Ready");
    const frame = screen.getByTestId("preview-frame");
    expect(frame).toHaveAttribute("src", cartUrl);
    expect(frame.getAttribute("sandbox")).not.toMatch(/allow-top-navigation/);
  });

  it("switching the module loads its first screen and filters the diff to it", async () => {
    const backend = setup({ start_preview: () => preview() });
    await openCard();
    await waitFor(() => expect(screen.getByTestId("preview-frame")).toHaveAttribute("src", cartUrl));

    fireEvent.change(screen.getByTestId("preview-module"), { target: { value: "@shop/coupons" } });
    expect(screen.getByTestId("preview-frame")).toHaveAttribute("src", couponsUrl);

    fireEvent.click(screen.getByTestId("tab-changes"));
    const filter = await screen.findByTestId("diff-module");
    expect(filter).toHaveValue("@shop/coupons");
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("get_diff", { sessionId: "s1", moduleId: "@shop/coupons" }),
    );
    expect(backend.call).not.toHaveBeenCalledWith("get_diff", { sessionId: "s1" });

    // The diff's own selector still works on its own.
    fireEvent.change(filter, { target: { value: "" } });
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("get_diff", { sessionId: "s1" }));
    expect(screen.getByTestId("preview-frame")).toHaveAttribute("src", couponsUrl);
  });

  it("a crash shows its message and the log's last lines, and no frame", async () => {
    const backend = setup({ start_preview: () => preview() });
    await openCard();
    await screen.findByTestId("preview-frame");
    expect(screen.queryByTestId("preview-log")).toBeNull();

    const log = Array.from({ length: 230 }, (_, i) => `line ${i}`).concat("Error: Cannot find module 'express'");
    act(() =>
      backend.emit(previewEvent(preview({ state: "crashed", message: "exited 3 times within 10 s (code 1)", log }))),
    );
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Crashed");
    expect(screen.getByTestId("preview-message")).toHaveTextContent("exited 3 times within 10 s (code 1)");
    const pre = screen.getByTestId("preview-log");
    expect(pre.tagName).toBe("PRE");
    expect(pre).toHaveTextContent("Error: Cannot find module 'express'");
    expect(pre).not.toHaveTextContent(/line 0\b/);
    expect(screen.queryByTestId("preview-frame")).toBeNull();
  });

  it("shows the log on demand while it runs", async () => {
    setup({ start_preview: () => preview() });
    await openCard();
    await screen.findByTestId("preview-frame");
    fireEvent.click(screen.getByTestId("preview-log-toggle"));
    expect(screen.getByTestId("preview-log")).toHaveTextContent("shop listening on 45678");
    expect(screen.getByTestId("preview-frame")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("preview-log-toggle"));
    expect(screen.queryByTestId("preview-log")).toBeNull();
  });

  it("follows events: Restarting… hides the frame, Ready brings it back; other sessions' events change nothing", async () => {
    const backend = setup({ start_preview: () => preview() });
    await openCard();
    await screen.findByTestId("preview-frame");

    act(() => backend.emit(previewEvent(preview({ sessionId: "other", state: "crashed", message: "not ours" }))));
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Ready");

    act(() => backend.emit(previewEvent(preview({ state: "restarting", restarts: 1 }))));
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Restarting…");
    expect(screen.queryByTestId("preview-frame")).toBeNull();

    act(() => backend.emit(previewEvent(preview({ restarts: 1 }))));
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Ready");
    expect(screen.getByTestId("preview-frame")).toHaveAttribute("src", cartUrl);
  });

  it("keeps the newest state when the start answer arrives after a later event", async () => {
    let answer: (p: PreviewView) => void = () => {};
    const backend = setup({ start_preview: () => new Promise<PreviewView>((resolve) => (answer = resolve)) });
    await openCard();
    act(() => backend.emit(previewEvent(preview())));
    await act(async () => answer(preview({ state: "starting" })));
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Ready");
    expect(screen.getByTestId("preview-frame")).toBeInTheDocument();
  });

  it("Reload loads the frame again; Restart and Stop call the engine", async () => {
    const backend = setup({ start_preview: () => preview() });
    await openCard();
    const before = await screen.findByTestId("preview-frame");
    fireEvent.click(screen.getByTestId("preview-reload"));
    const after = screen.getByTestId("preview-frame");
    expect(after).not.toBe(before);
    expect(after).toHaveAttribute("src", cartUrl);

    fireEvent.click(screen.getByTestId("preview-restart"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("restart_preview", { sessionId: "s1" }));
    await waitFor(() => expect(screen.getByTestId("preview-state")).toHaveTextContent("Starting…"));

    fireEvent.click(screen.getByTestId("preview-close"));
    await waitFor(() => expect(screen.queryByTestId("preview-card")).toBeNull());
    expect(backend.call).toHaveBeenCalledWith("stop_preview", { sessionId: "s1" });
  });

  it("stays open with the error when stopping fails", async () => {
    setup({
      start_preview: () => preview(),
      stop_preview: () => {
        throw { code: "INTERNAL", message: "could not stop" };
      },
    });
    await openCard();
    fireEvent.click(screen.getByTestId("preview-close"));
    expect(await screen.findByTestId("preview-error")).toHaveTextContent("could not stop");
    expect(screen.getByTestId("preview-card")).toBeInTheDocument();
  });

  it("opens the selected screen in a browser tab without an opener", async () => {
    const open = vi.spyOn(window, "open").mockReturnValue(null);
    setup({ start_preview: () => preview() });
    await openCard();
    await screen.findByTestId("preview-frame");
    fireEvent.change(screen.getByTestId("preview-module"), { target: { value: "@shop/coupons" } });
    fireEvent.click(screen.getByTestId("preview-open"));
    expect(open).toHaveBeenCalledWith(couponsUrl, "_blank", "noopener");
  });

  it("full screen toggles, and Esc leaves it", async () => {
    setup({ start_preview: () => preview() });
    const card = await openCard();
    const toggle = screen.getByTestId("preview-fullscreen");
    fireEvent.click(toggle);
    expect(card).toHaveClass("preview-card-full");
    expect(toggle).toHaveAttribute("aria-pressed", "true");
    fireEvent.keyDown(window, { key: "Escape" });
    expect(card).not.toHaveClass("preview-card-full");
  });

  it("shows the bridge's activity when there is a bridge", async () => {
    const bridge = { url: "https://shop.example.com", forwarded: 7, unavailable: 2, refused: 0 };
    const backend = setup({ start_preview: () => preview() });
    await openCard();
    await screen.findByTestId("preview-frame");
    expect(screen.queryByTestId("preview-bridge")).toBeNull();
    act(() => backend.emit(previewEvent(preview({ data: "bridge", bridge }))));
    const line = screen.getByTestId("preview-bridge");
    expect(line).toHaveTextContent("https://shop.example.com");
    expect(line).toHaveTextContent("7 forwarded");
    expect(line).toHaveTextContent("2 unavailable");
  });

  it("a workspace without a preview shows PREVIEW_NOT_CONFIGURED and what to set", async () => {
    setup({
      start_preview: () => {
        throw { code: "PREVIEW_NOT_CONFIGURED", message: "this workspace has no preview: set `[preview] command`" };
      },
    });
    const card = await openCard();
    const error = await within(card).findByTestId("preview-error");
    expect(error).toHaveTextContent("this workspace has no preview");
    expect(error).toHaveTextContent("PREVIEW_NOT_CONFIGURED");
    expect(card).toHaveTextContent("kiln.toml");
    expect(screen.getByTestId("preview-state")).toHaveTextContent("Stopped");
    expect(screen.queryByTestId("preview-frame")).toBeNull();
    expect(screen.queryByText(/Starting the preview/)).toBeNull();
  });

  it("opens at once when the route asks for it (?preview=1)", async () => {
    const backend = fakeBackend({
      get_session: () => session,
      get_transcript: () => [],
      start_preview: () => preview(),
    });
    renderWithStore(<SessionScreen sessionId="s1" openPreview />, backend);
    expect(await screen.findByTestId("preview-frame")).toHaveAttribute("src", cartUrl);
    expect(backend.call.mock.calls.filter(([c]) => c === "start_preview")).toHaveLength(1);
  });
});

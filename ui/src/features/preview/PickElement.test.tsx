// Tests for picking in the preview: Pick element says so and cancels with Esc; the frame's answer (only from that frame, on the preview's origin) is captured and becomes a chip in the composer that goes with the next message.
import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ScreenshotView } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { fakeBackend, makePreview, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";

const session = makeSession({ state: "editing" });
const ORIGIN = "http://127.0.0.1:41234";
const shot: ScreenshotView = {
  id: 9,
  kind: "element",
  checkpoint: 0,
  moduleId: null,
  pagePath: "/?module=cart",
  width: 120,
  height: 40,
  takenAt: "2025-01-01T10:30:00Z",
};
const picked = {
  kiln: "picked",
  kind: "element",
  selector: "#buy",
  html: '<button id="buy">Buy</button>',
  htmlCut: false,
  styles: { color: "red" },
  rect: { x: 50, y: 300, width: 120, height: 40 },
  viewport: { width: 640, height: 480 },
  path: "/?module=cart",
};

async function readyCard() {
  const backend = fakeBackend({
    get_session: () => session,
    get_transcript: () => [],
    get_diff: () => ({ modules: [] }),
    start_preview: () => makePreview({ moduleUrls: [{ moduleId: session.modules[0].id, path: "/?module=cart" }] }),
    capture_preview: () => shot,
    get_screenshot: () => ({ screenshot: shot, pngBase64: "iVBORw0KGgo=" }),
    send_message: () => session,
  });
  renderWithStore(<SessionScreen sessionId="s1" />, backend);
  fireEvent.click(await screen.findByTestId("preview-button"));
  const frame = (await screen.findByTestId("preview-frame")) as HTMLIFrameElement;
  return { backend, frame };
}

function answer(source: Window | null, data: unknown, origin = ORIGIN) {
  act(() => {
    window.dispatchEvent(new MessageEvent("message", { data, origin, source }));
  });
}

describe("Pick element", () => {
  it("says it is picking and Esc cancels", async () => {
    await readyCard();
    fireEvent.click(screen.getByTestId("preview-pick"));
    expect(screen.getByTestId("pick-bar")).toHaveAttribute("data-mode", "element");
    expect(screen.getByTestId("preview-pick")).toHaveAttribute("aria-pressed", "true");
    fireEvent.keyDown(window, { key: "Escape" });
    expect(screen.queryByTestId("pick-bar")).toBeNull();
    expect(screen.getByTestId("preview-card")).toBeInTheDocument();
  });

  it("captures the frame's pick, shows a chip, and sends it with the next message", async () => {
    const { backend, frame } = await readyCard();
    fireEvent.click(screen.getByTestId("preview-pick"));
    // Another window, or another origin, is not the preview.
    answer(window, picked);
    answer(frame.contentWindow, picked, "http://127.0.0.1:9");
    expect(backend.call).not.toHaveBeenCalledWith("capture_preview", expect.anything());

    answer(frame.contentWindow, picked);
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("capture_preview", {
        sessionId: "s1",
        moduleId: session.modules[0].id,
        path: "/?module=cart",
        selector: "#buy",
        viewportWidth: 640,
        viewportHeight: 480,
      }),
    );
    const chip = await screen.findByTestId("pointed-chip");
    expect(chip).toHaveTextContent("#buy");
    expect(screen.queryByTestId("pick-bar")).toBeNull();

    fireEvent.change(screen.getByTestId("message"), { target: { value: "Make it red" } });
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith(
        "send_message",
        expect.objectContaining({
          text: "Make it red",
          context: [
            {
              screenshotId: 9,
              pagePath: "/?module=cart",
              selector: "#buy",
              html: '<button id="buy">Buy</button>',
              styles: { color: "red" },
            },
          ],
        }),
      ),
    );
    await waitFor(() => expect(screen.queryByTestId("pointed-chip")).toBeNull());
  });

  it("a chip can be removed before sending", async () => {
    const { frame } = await readyCard();
    fireEvent.click(screen.getByTestId("preview-region"));
    answer(frame.contentWindow, { ...picked, kind: "region" });
    fireEvent.click(await screen.findByTestId("remove-pointed"));
    expect(screen.queryByTestId("pointed-chip")).toBeNull();
  });
});

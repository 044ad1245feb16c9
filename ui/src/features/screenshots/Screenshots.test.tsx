// Tests for the preview's screenshots in the session: the filmstrip (oldest first, "Before" first, click to view large), the thumbnail at a turn's checkpoint row, and one fetch per screenshot.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ScreenshotView } from "../../api/types";
import { SessionScreen } from "../session/SessionScreen";
import { fakeBackend, makeCheckpoint, makeEntry, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Filmstrip } from "./Filmstrip";

function shot(id: number, checkpoint: number): ScreenshotView {
  return {
    id,
    kind: "turn",
    checkpoint,
    moduleId: "app",
    pagePath: "/",
    width: 1280,
    height: 800,
    takenAt: "2026-12-02T14:00:00Z",
  };
}

const PNG = "iVBORw0KGgo=";
const session = makeSession({
  state: "review",
  checkpoints: [makeCheckpoint(0), makeCheckpoint(1, { entryId: 2, current: true })],
  screenshots: [shot(3, 1), shot(1, 0), { ...shot(2, 0), kind: "element" }],
});

function backend() {
  return fakeBackend({
    get_session: () => session,
    get_transcript: () => [
      makeEntry(1, { kind: "user", text: "Make it red" }),
      makeEntry(2, { kind: "handoff", text: "**engineer → none**" }),
    ],
    get_screenshot: (args) => ({ screenshot: shot(args.screenshotId, 0), pngBase64: PNG }),
  });
}

describe("Filmstrip", () => {
  it("shows the turn screenshots oldest first, labelled, and one large on click", async () => {
    const b = backend();
    renderWithStore(<Filmstrip session={session} />, b);
    const strip = screen.getByTestId("filmstrip");
    const thumbs = within(strip).getAllByTestId("screenshot-thumb");
    expect(thumbs.map((t) => t.querySelector(".shot-thumb-caption")?.textContent)).toEqual(["Before", "Checkpoint 1"]);
    await waitFor(() =>
      expect(within(thumbs[1]).getByRole("img").getAttribute("src")).toBe(`data:image/png;base64,${PNG}`),
    );
    fireEvent.click(thumbs[1]);
    const dialog = await screen.findByRole("dialog");
    expect(within(dialog).getByTestId("screenshot-large").getAttribute("src")).toContain(PNG);
    expect(within(dialog).getByText("Checkpoint 1: app")).toBeTruthy();
    // Each PNG is fetched once, the large view from the cache.
    const fetched = b.call.mock.calls
      .filter(([c]) => c === "get_screenshot")
      .map(([, a]) => (a as { screenshotId: number }).screenshotId);
    expect(fetched.sort()).toEqual([1, 3]);
  });

  it("shows nothing without turn screenshots", () => {
    renderWithStore(<Filmstrip session={makeSession({ screenshots: [{ ...shot(1, 0), kind: "page" }] })} />, backend());
    expect(screen.queryByTestId("filmstrip")).toBeNull();
  });
});

describe("a turn's checkpoint row", () => {
  it("carries the screenshot of its checkpoint", async () => {
    renderWithStore(<SessionScreen sessionId="s1" />, backend());
    const row = await screen.findByTestId("entry-checkpoint");
    const thumb = await within(row).findByTestId("screenshot-thumb");
    expect(thumb.dataset.checkpoint).toBe("1");
  });
});

// Tests for the composer: the args it sends, the send key (Enter, Shift+Enter, the Ctrl+Enter setting, IME) and its hint, errors keep the text, Continue, closed sessions.
import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { saveSendKey } from "../shortcuts/keymap";
import { appState, fakeBackend, makeSession, makeSettings, workspace } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Composer } from "./Composer";

const session = makeSession({
  state: "editing",
  modules: [
    { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
    { id: "@shop/api", directory: "modules/api", kind: "edit", joinedAt: "2025-01-01T10:01:00Z", baseSequence: 1 },
  ],
});
const settings = makeSettings({ defaultDriver: "claude" });

function type(text: string) {
  fireEvent.change(screen.getByTestId("message"), { target: { value: text } });
}

describe("Composer", () => {
  it("sends the text with the primary module and the default driver, and clears on success", async () => {
    const backend = fakeBackend({ send_message: () => ({ ...session, running: true }) });
    renderWithStore(<Composer session={session} settings={settings} />, backend);

    expect(screen.getByTestId("role-picker")).toHaveValue("");
    expect(screen.getByTestId("module-picker")).toHaveValue("@shop/cart");
    expect(screen.getByTestId("driver-picker")).toHaveValue("claude");
    type("  Add a coupon field  ");
    fireEvent.click(screen.getByTestId("send"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "s1",
        text: "Add a coupon field",
        module: "@shop/cart",
        driver: "claude",
      }),
    );
    await waitFor(() => expect(screen.getByTestId("message")).toHaveValue(""));
  });

  it("sends the picked role, module, driver and model on Ctrl+Enter", async () => {
    const backend = fakeBackend({ send_message: () => session });
    const withOpenAi = makeSettings({
      drivers: [
        ...settings.drivers.slice(0, 2),
        { id: "openai-compatible", available: true, detail: "gpt at x", version: null, signedIn: true },
      ],
    });
    renderWithStore(<Composer session={session} settings={withOpenAi} />, backend);

    // The roles come from the workspace (get_state).
    await screen.findByRole("option", { name: "Backend Engineer" });
    fireEvent.change(screen.getByTestId("role-picker"), { target: { value: "backend-engineer" } });
    fireEvent.change(screen.getByTestId("module-picker"), { target: { value: "@shop/api" } });
    fireEvent.change(screen.getByTestId("driver-picker"), { target: { value: "openai-compatible" } });
    fireEvent.change(screen.getByTestId("model"), { target: { value: "gpt-4.1" } });
    type("Rate limit it");
    fireEvent.keyDown(screen.getByTestId("message"), { key: "Enter", ctrlKey: true });

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "s1",
        text: "Rate limit it",
        role: "backend-engineer",
        module: "@shop/api",
        driver: "openai-compatible",
        model: "gpt-4.1",
      }),
    );
  });

  it("offers Auto then the workspace's roles, and shows unavailable drivers disabled with their detail", async () => {
    renderWithStore(<Composer session={session} settings={settings} />, fakeBackend());
    await screen.findByRole("option", { name: "Business Manager" });
    const roles = Array.from(screen.getByTestId("role-picker").querySelectorAll("option")).map((o) => o.value);
    expect(roles).toEqual([
      "",
      "business-manager",
      "ux-designer",
      "frontend-engineer",
      "backend-engineer",
      "agentic-engineer",
    ]);
    expect(screen.getByTestId("role-picker")).toHaveValue("");
    expect(screen.getByRole("option", { name: "Auto" })).toBeInTheDocument();
    const codex = screen.getByRole("option", { name: /codex/ });
    expect(codex).toBeDisabled();
    expect(codex).toHaveAttribute("title", "install it with `npm i -g @openai/codex`");
  });

  it("in the direct workflow offers engineer and the workspace's own roles, not the specialists", async () => {
    const direct = {
      ...workspace,
      workflow: "direct" as const,
      roles: [
        { id: "engineer", name: "Engineer" },
        { id: "release-manager", name: "Release Manager" },
      ],
    };
    const backend = fakeBackend({ get_state: () => ({ ...appState, workspace: direct }), send_message: () => session });
    renderWithStore(<Composer session={session} settings={settings} />, backend);

    await screen.findByRole("option", { name: "Release Manager" });
    const picker = screen.getByTestId("role-picker");
    expect(Array.from(picker.querySelectorAll("option")).map((o) => [o.value, o.textContent])).toEqual([
      ["", "Auto"],
      ["engineer", "Engineer"],
      ["release-manager", "Release Manager"],
    ]);
    expect(picker).toHaveValue("");

    fireEvent.change(picker, { target: { value: "engineer" } });
    type("Fix the flaky test");
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "s1",
        text: "Fix the flaky test",
        role: "engineer",
        module: "@shop/cart",
        driver: "claude",
      }),
    );
  });

  it("keeps the text and shows the error code and message when the send fails", async () => {
    const backend = fakeBackend({
      send_message: () => {
        throw { code: "DRIVER_NOT_FOUND", message: "codex is not installed: npm i -g @openai/codex" };
      },
    });
    renderWithStore(<Composer session={session} settings={settings} />, backend);
    type("Please build it");
    fireEvent.click(screen.getByTestId("send"));

    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("DRIVER_NOT_FOUND");
    expect(error).toHaveTextContent("codex is not installed");
    expect(screen.getByTestId("message")).toHaveValue("Please build it");
    expect(screen.getByTestId("send")).toBeEnabled();
  });

  it("tells where the message goes and continues with the pending role", async () => {
    const backend = fakeBackend({ send_message: () => ({ ...session, pendingRole: null }) });
    renderWithStore(<Composer session={{ ...session, pendingRole: "ux-designer" }} settings={null} />, backend);

    expect(screen.getByTestId("pending-role")).toHaveTextContent("Your message goes to UX Designer");
    fireEvent.click(screen.getByTestId("continue"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", {
        sessionId: "s1",
        text: "Continue.",
        role: "ux-designer",
        module: "@shop/cart",
      }),
    );
  });

  it("is disabled for archived, rejected, deleted and delivered sessions", () => {
    for (const closed of [
      { archivedAt: "2025-01-02T00:00:00Z" },
      { rejectedAt: "2025-01-02T00:00:00Z" },
      { deletedAt: "2025-01-02T00:00:00Z" },
      { state: "delivered" as const, deliveredAt: "2025-01-02T00:00:00Z" },
    ]) {
      const { unmount } = renderWithStore(
        <Composer session={{ ...session, ...closed }} settings={settings} />,
        fakeBackend(),
      );
      expect(screen.getByTestId("message")).toBeDisabled();
      expect(screen.getByTestId("send")).toBeDisabled();
      expect(screen.getByTestId("composer-closed")).toBeInTheDocument();
      unmount();
    }
  });

  describe("the send key", () => {
    afterEach(() => localStorage.clear());

    it("sends on Enter, not on Shift+Enter nor while an input method composes, and says so", async () => {
      const backend = fakeBackend({ send_message: () => session });
      renderWithStore(<Composer session={session} settings={settings} />, backend);
      expect(screen.getByTestId("send-hint")).toHaveTextContent("Enter to send · Shift+Enter for a new line");
      type("Add a coupon field");
      const box = screen.getByTestId("message");
      fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
      fireEvent.keyDown(box, { key: "Enter", isComposing: true });
      fireEvent.keyDown(box, { key: "Enter", keyCode: 229 });
      expect(backend.call).not.toHaveBeenCalledWith("send_message", expect.anything());
      fireEvent.keyDown(box, { key: "Enter" });
      await waitFor(() =>
        expect(backend.call).toHaveBeenCalledWith(
          "send_message",
          expect.objectContaining({ text: "Add a coupon field" }),
        ),
      );
    });

    it("with the Ctrl+Enter setting, Enter makes a newline and Ctrl+Enter sends; the hint follows the setting", async () => {
      saveSendKey("ctrl-enter");
      const backend = fakeBackend({ send_message: () => session });
      renderWithStore(<Composer session={session} settings={settings} />, backend);
      expect(screen.getByTestId("send-hint")).toHaveTextContent("Ctrl+Enter to send · Enter for a new line");
      type("Two lines");
      const box = screen.getByTestId("message");
      expect(fireEvent.keyDown(box, { key: "Enter" })).toBe(true); // not prevented: the newline goes in
      expect(backend.call).not.toHaveBeenCalledWith("send_message", expect.anything());
      fireEvent.keyDown(box, { key: "Enter", ctrlKey: true });
      await waitFor(() =>
        expect(backend.call).toHaveBeenCalledWith("send_message", expect.objectContaining({ text: "Two lines" })),
      );
      act(() => saveSendKey("enter"));
      expect(screen.getByTestId("send-hint")).toHaveTextContent("Enter to send");
    });
  });
});

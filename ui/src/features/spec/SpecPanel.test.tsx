// Tests for the specification panel: markdown and status badge, editing with save_spec, inline errors, the empty state.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { SpecView } from "../../api/types";
import { StoreProvider } from "../../state/store";
import { fakeBackend } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { SpecPanel, specBody, specTemplate } from "./SpecPanel";

const TEXT = "---\nstatus: approved\n---\n# Cart\n\nShoppers apply **one** coupon.\n\n<script>alert(1)</script>\n";

function makeSpec(overrides: Partial<SpecView> = {}): SpecView {
  return {
    moduleId: "@shop/cart",
    path: "modules/cart/SPEC.md",
    text: TEXT,
    status: "approved",
    approved: true,
    ...overrides,
  };
}

describe("specBody", () => {
  it("drops the front matter and keeps the rest", () => {
    expect(specBody(TEXT)).toBe("# Cart\n\nShoppers apply **one** coupon.\n\n<script>alert(1)</script>\n");
    expect(specBody("---\r\nstatus: draft\r\n---\r\nBody")).toBe("Body");
    expect(specBody("# No front matter\n---\n")).toBe("# No front matter\n---\n");
    expect(specTemplate("@shop/cart")).toBe("---\nstatus: draft\n---\n# @shop/cart\n");
  });
});

describe("SpecPanel", () => {
  it("renders the specification as sanitized markdown under an approved badge", async () => {
    const backend = fakeBackend({ get_spec: () => makeSpec() });
    renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/cart" />, backend);

    const body = await screen.findByTestId("spec-body");
    expect(backend.call).toHaveBeenCalledWith("get_spec", { sessionId: "s1", moduleId: "@shop/cart" });
    expect(within(body).getByRole("heading", { name: "Cart" })).toBeInTheDocument();
    expect(body.querySelector("strong")).toHaveTextContent("one");
    expect(body.querySelector("script")).toBeNull();
    expect(body).not.toHaveTextContent("status: approved");
    const badge = screen.getByTestId("spec-status");
    expect(badge).toHaveTextContent("approved");
    expect(badge).toHaveClass("badge-success");
    expect(screen.getByTestId("spec-panel")).toHaveTextContent("modules/cart/SPEC.md");
  });

  it("shows the raw status as not approved", async () => {
    const backend = fakeBackend({ get_spec: () => makeSpec({ status: "draft", approved: false }) });
    renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/cart" />, backend);
    const badge = await screen.findByTestId("spec-status");
    expect(badge).toHaveTextContent("draft · not approved");
    expect(badge).not.toHaveClass("badge-success");
  });

  it("edits in a monospace textarea and saves with save_spec, showing the returned view", async () => {
    const edited = "---\nstatus: approved\n---\n# Cart\n\nShoppers apply **two** coupons.\n";
    const backend = fakeBackend({
      get_spec: () => makeSpec(),
      save_spec: (args) => makeSpec({ text: args.text, approved: false }),
    });
    renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/cart" />, backend);

    fireEvent.click(await screen.findByTestId("edit-spec"));
    const textarea = screen.getByTestId("spec-text");
    expect(textarea).toHaveValue(TEXT);
    expect(textarea).toHaveClass("spec-text");
    expect(textarea).toHaveAccessibleName(/Specification of/);
    fireEvent.change(textarea, { target: { value: edited } });
    fireEvent.click(screen.getByTestId("save-spec"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("save_spec", { sessionId: "s1", moduleId: "@shop/cart", text: edited }),
    );
    const body = await screen.findByTestId("spec-body");
    expect(body.querySelector("strong")).toHaveTextContent("two");
    expect(screen.queryByTestId("spec-text")).not.toBeInTheDocument();
    expect(screen.getByTestId("spec-status")).toHaveTextContent("approved · not approved");
    expect(screen.getByTestId("spec-panel")).toHaveAttribute("data-approved", "false");
  });

  it("keeps the draft and shows a save error inline with its code", async () => {
    const backend = fakeBackend({
      get_spec: () => makeSpec(),
      save_spec: () => {
        throw { code: "SESSION_RUNNING", message: "edit the specification when the turn has ended" };
      },
    });
    renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/cart" />, backend);

    fireEvent.click(await screen.findByTestId("edit-spec"));
    fireEvent.change(screen.getByTestId("spec-text"), { target: { value: "my edit" } });
    fireEvent.click(screen.getByTestId("save-spec"));

    const error = await screen.findByTestId("spec-error");
    expect(error).toHaveTextContent("edit the specification when the turn has ended");
    expect(error).toHaveTextContent("SESSION_RUNNING");
    expect(screen.getByTestId("spec-text")).toHaveValue("my edit");
    expect(screen.getByTestId("save-spec")).toBeEnabled();

    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.queryByTestId("spec-error")).not.toBeInTheDocument();
    expect(screen.getByTestId("spec-body")).toHaveTextContent("Shoppers apply one coupon.");
  });

  it("says when a module has no specification and edits from a template", async () => {
    const backend = fakeBackend({
      get_spec: () =>
        makeSpec({
          moduleId: "@shop/coupons",
          path: "modules/coupons/SPEC.md",
          text: null,
          status: null,
          approved: false,
        }),
    });
    renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/coupons" />, backend);

    expect(await screen.findByTestId("spec-empty")).toHaveTextContent("No specification yet");
    expect(screen.queryByTestId("spec-status")).not.toBeInTheDocument();
    fireEvent.click(screen.getByTestId("edit-spec"));
    expect(screen.getByTestId("spec-text")).toHaveValue("---\nstatus: draft\n---\n# @shop/coupons\n");
  });

  it("shows a load error inline, is read only when not editable, and disables Save while a turn runs", async () => {
    const failing = fakeBackend({
      get_spec: () => {
        throw { code: "MODULE_NOT_FOUND", message: "`@shop/nope` is not a module of this session" };
      },
    });
    const { unmount } = renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/nope" />, failing);
    expect(await screen.findByTestId("spec-error")).toHaveTextContent("MODULE_NOT_FOUND");
    unmount();

    const backend = fakeBackend({ get_spec: () => makeSpec() });
    const readOnly = renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/cart" editable={false} />, backend);
    await screen.findByTestId("spec-body");
    expect(screen.queryByTestId("edit-spec")).not.toBeInTheDocument();
    readOnly.unmount();

    renderWithStore(<SpecPanel sessionId="s1" moduleId="@shop/cart" running />, backend);
    fireEvent.click(await screen.findByTestId("edit-spec"));
    expect(screen.getByTestId("save-spec")).toBeDisabled();
  });

  it("fetches again when its refresh key changes", async () => {
    let text = TEXT;
    const backend = fakeBackend({ get_spec: () => makeSpec({ text }) });
    const { rerender } = renderWithStore(
      <SpecPanel sessionId="s1" moduleId="@shop/cart" refreshKey="idle:1" />,
      backend,
    );
    await screen.findByTestId("spec-body");
    text = "---\nstatus: approved\n---\nChanged by a turn\n";
    rerender(
      <StoreProvider backend={backend}>
        <SpecPanel sessionId="s1" moduleId="@shop/cart" refreshKey="idle:2" />
      </StoreProvider>,
    );
    await waitFor(() => expect(screen.getByTestId("spec-body")).toHaveTextContent("Changed by a turn"));
    expect(backend.call.mock.calls.filter(([c]) => c === "get_spec")).toHaveLength(2);
  });
});

// Tests for the new-session screen: module chips, Ctrl+Enter, create args, inline errors.
import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { fakeBackend, makeSession } from "../test/fixtures";
import { renderWithStore } from "../test/render";
import { insertAt, NewSession } from "./NewSession";

describe("insertAt", () => {
  it("pads the inserted id with spaces", () => {
    expect(insertAt("", 0, 0, "@a")).toEqual({ value: "@a ", caret: 3 });
    expect(insertAt("fix in", 6, 6, "@a")).toEqual({ value: "fix in @a ", caret: 10 });
    expect(insertAt("fix  now", 4, 4, "@a")).toEqual({ value: "fix @a now", caret: 6 });
  });
});

describe("NewSession", () => {
  it("inserts a module id from its chip and creates the session with Ctrl+Enter", async () => {
    const backend = fakeBackend({ create_session: () => makeSession({ id: "new-1" }) });
    renderWithStore(<NewSession />, backend);

    const brief = (await screen.findByTestId("brief")) as HTMLTextAreaElement;
    fireEvent.change(brief, { target: { value: "Add coupons to" } });
    brief.setSelectionRange(brief.value.length, brief.value.length);
    fireEvent.click(screen.getByRole("button", { name: "@shop/cart" }));
    expect(brief.value).toBe("Add coupons to @shop/cart ");

    fireEvent.keyDown(brief, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("create_session", { brief: "Add coupons to @shop/cart" }));
    await waitFor(() => expect(window.location.hash).toBe("#/session/new-1"));
  });

  it("sends the title when given", async () => {
    const backend = fakeBackend({ create_session: () => makeSession() });
    renderWithStore(<NewSession />, backend);
    fireEvent.change(await screen.findByTestId("brief"), { target: { value: "Do it in @shop/api" } });
    fireEvent.change(screen.getByTestId("title"), { target: { value: " Rate limits " } });
    fireEvent.click(screen.getByTestId("create-session"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("create_session", { brief: "Do it in @shop/api", title: "Rate limits" }),
    );
  });

  it("shows MODULE_REQUIRED inline and stays on the form", async () => {
    const backend = fakeBackend({
      create_session: () => {
        throw { code: "MODULE_REQUIRED", message: "Name at least one module" };
      },
    });
    renderWithStore(<NewSession />, backend);
    fireEvent.change(await screen.findByTestId("brief"), { target: { value: "Make it faster" } });
    fireEvent.click(screen.getByTestId("create-session"));
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("Name at least one module");
    expect(error).toHaveTextContent("MODULE_REQUIRED");
    expect(screen.getByTestId("create-session")).toBeEnabled();
    expect(window.location.hash).toBe("");
  });

  it("keeps Create disabled while the brief is empty", async () => {
    renderWithStore(<NewSession />, fakeBackend());
    expect(await screen.findByTestId("create-session")).toBeDisabled();
  });
});

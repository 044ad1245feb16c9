// Tests for the composer's model picker: the endpoint's complete list (no typed ids), an agent's aliases with "Other…" for a typed id, and a plain field when the agent lists nothing.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ModelListView } from "../../api/types";
import { fakeBackend, makeSession, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Composer } from "./Composer";

const session = makeSession({ state: "editing" });

function listed(list: Partial<ModelListView>): ModelListView {
  return { driver: "openai-compatible", defaultModel: null, models: [], source: "x", complete: false, ...list };
}

describe("the model picker", () => {
  it("offers the endpoint's own models and nothing typed, and sends the one picked", async () => {
    const backend = fakeBackend({
      list_models: () => listed({ models: ["scripted", "scripted-large"], defaultModel: "scripted", complete: true }),
      send_message: () => session,
    });
    const settings = makeSettings({ defaultDriver: "openai-compatible" });
    renderWithStore(<Composer session={session} settings={settings} />, backend);
    const picker = await screen.findByTestId("model-picker");
    const options = within(picker)
      .getAllByRole("option")
      .map((o) => o.textContent);
    expect(options).toEqual(["Default (scripted)", "scripted", "scripted-large"]);
    expect(screen.queryByTestId("model")).toBeNull();
    fireEvent.change(picker, { target: { value: "scripted-large" } });
    fireEvent.change(screen.getByTestId("message"), { target: { value: "Go" } });
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("send_message", expect.objectContaining({ model: "scripted-large" })),
    );
  });

  it("offers an agent's aliases with Other… for a typed id", async () => {
    const backend = fakeBackend({
      list_models: () => listed({ driver: "claude", models: ["sonnet", "opus", "haiku"] }),
    });
    renderWithStore(<Composer session={session} settings={makeSettings({ defaultDriver: "claude" })} />, backend);
    const picker = await screen.findByTestId("model-picker");
    expect(within(picker).getByRole("option", { name: "Other…" })).toBeInTheDocument();
    expect(screen.queryByTestId("model")).toBeNull();
    fireEvent.change(picker, {
      target: { value: within(picker).getByRole("option", { name: "Other…" }).getAttribute("value") },
    });
    fireEvent.change(await screen.findByTestId("model"), { target: { value: "claude-sonnet-4-5" } });
    expect(screen.getByTestId("model")).toHaveValue("claude-sonnet-4-5");
  });

  it("is a plain field when the agent lists no model", async () => {
    const backend = fakeBackend({ list_models: () => listed({ driver: "codex" }) });
    renderWithStore(<Composer session={session} settings={makeSettings({ defaultDriver: "codex" })} />, backend);
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("list_models", { driver: "codex" }));
    expect(screen.getByTestId("model")).toBeInTheDocument();
    expect(screen.queryByTestId("model-picker")).toBeNull();
  });
});

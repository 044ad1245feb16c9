// Tests for @-autocomplete in the session composer: Enter picks the module while the list is open, and sends once it is closed.
import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { Composer } from "../chat/Composer";
import { fakeBackend, makeSession, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";

const session = makeSession({ state: "editing" });

describe("Composer @-autocomplete", () => {
  it("offers the workspace's modules after @, inserts one with Enter without sending, then Enter sends", async () => {
    const backend = fakeBackend({ send_message: () => session });
    renderWithStore(<Composer session={session} settings={makeSettings()} />, backend);
    // The workspace's modules arrive with the app state.
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("get_state", expect.anything()));
    const text = screen.getByTestId("message") as HTMLTextAreaElement;
    const user = userEvent.setup();
    await user.click(text);
    await user.type(text, "Also touch @");
    await waitFor(() =>
      expect(screen.getAllByTestId("module-option").map((o) => o.getAttribute("data-module"))).toEqual([
        "@shop/cart",
        "@shop/api",
      ]),
    );
    await user.keyboard("{ArrowDown}{Enter}");
    expect(text.value).toBe("Also touch @shop/api ");
    expect(backend.call).not.toHaveBeenCalledWith("send_message", expect.anything());
    await user.keyboard("{Enter}");
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith(
        "send_message",
        expect.objectContaining({ text: "Also touch @shop/api" }),
      ),
    );
  });
});

// Tests for the delivery settings: only changes are sent (reviewers as a list), the token is write-only with its fingerprint shown, an API URL change asks for the token and shows the server's refusal inline.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { SettingsView, UpdateSettingsArgs } from "../../api/types";
import { SettingsScreen } from "../settings/SettingsScreen";
import { fakeBackend, makeSettings } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";

const TOKEN = "ghp_verysecrettoken0123456789";

function withDelivery(delivery: Partial<SettingsView["delivery"]>): SettingsView {
  const base = makeSettings();
  return { ...base, delivery: { ...base.delivery, ...delivery } };
}

describe("Delivery settings", () => {
  it("saves repository, reviewers as a list and the push mode, and says saving never pushes", async () => {
    let sent: UpdateSettingsArgs | undefined;
    const backend = fakeBackend({
      get_settings: () => withDelivery({}),
      update_settings: (args) => {
        sent = args;
        return withDelivery({ repository: "acme/shop", reviewers: ["alice", "bob"], pushMode: "fork" });
      },
    });
    renderWithStore(<SettingsScreen />, backend);
    expect(await screen.findByTestId("delivery-no-push", {}, { timeout: 3000 })).toHaveTextContent(
      "Saving never pushes anything",
    );
    fireEvent.change(screen.getByTestId("delivery-repository"), { target: { value: "acme/shop" } });
    fireEvent.change(screen.getByTestId("delivery-reviewers"), { target: { value: " alice, bob ,," } });
    fireEvent.change(screen.getByTestId("delivery-push-mode"), { target: { value: "fork" } });
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(
      () =>
        expect(sent).toEqual({
          deliveryRepository: "acme/shop",
          deliveryReviewers: ["alice", "bob"],
          deliveryPushMode: "fork",
        }),
      { timeout: 3000 },
    );
    expect(await screen.findByTestId("delivery-reviewers", {}, { timeout: 3000 })).toHaveValue("alice, bob");
  });

  it("sends the token once and shows only its fingerprint afterwards", async () => {
    let sent: UpdateSettingsArgs | undefined;
    const backend = fakeBackend({
      get_settings: () => withDelivery({}),
      update_settings: (args) => {
        sent = args;
        return withDelivery({ tokenFingerprint: "sha256:77aa" });
      },
    });
    renderWithStore(<SettingsScreen />, backend);
    const field = await screen.findByTestId("delivery-token", {}, { timeout: 3000 });
    expect(field).toHaveAttribute("type", "password");
    expect(screen.queryByTestId("delivery-token-fingerprint")).toBeNull();
    fireEvent.change(field, { target: { value: TOKEN } });
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(() => expect(sent).toEqual({ deliveryToken: TOKEN }), { timeout: 3000 });
    expect(await screen.findByTestId("delivery-token-fingerprint")).toHaveTextContent("sha256:77aa");
    expect(screen.getByTestId("delivery-token")).toHaveValue("");
    expect(document.body.innerHTML).not.toContain(TOKEN);
  });

  it("asks for the token with a new API URL and shows the server's INVALID_INPUT next to it", async () => {
    const backend = fakeBackend({
      get_settings: () => withDelivery({ tokenFingerprint: "sha256:77aa" }),
      update_settings: (args) => {
        if (args.deliveryApiUrl !== undefined && !args.deliveryToken)
          throw { code: "INVALID_INPUT", message: "changing the API URL needs the token again" };
        return withDelivery({ apiUrl: args.deliveryApiUrl, tokenFingerprint: "sha256:1234" });
      },
    });
    renderWithStore(<SettingsScreen />, backend);
    fireEvent.click(await screen.findByTestId("delivery-advanced", {}, { timeout: 3000 }));
    expect(screen.queryByTestId("delivery-token-needed")).toBeNull();
    fireEvent.change(screen.getByTestId("delivery-api-url"), { target: { value: "https://ghe.example.com/api/v3" } });
    expect(screen.getByTestId("delivery-token-needed")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("save-settings"));
    const inline = await screen.findByTestId("delivery-api-error");
    expect(inline).toHaveTextContent("changing the API URL needs the token again");
    expect(within(inline).getByText("INVALID_INPUT")).toBeInTheDocument();
    // Inline, not as the form's general error.
    expect(screen.queryByTestId("error")).toBeNull();

    fireEvent.change(screen.getByTestId("delivery-token"), { target: { value: TOKEN } });
    expect(screen.queryByTestId("delivery-token-needed")).toBeNull();
    fireEvent.click(screen.getByTestId("save-settings"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("update_settings", {
        deliveryApiUrl: "https://ghe.example.com/api/v3",
        deliveryToken: TOKEN,
      }),
    );
    expect(await screen.findByTestId("delivery-token-fingerprint")).toHaveTextContent("sha256:1234");
  });
});

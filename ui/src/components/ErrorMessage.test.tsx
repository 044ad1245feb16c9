// Tests for ErrorMessage: the message in words with backticks as code, the code behind a details toggle.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { KilnError } from "../api/backend";
import { ErrorMessage } from "./ErrorMessage";

describe("ErrorMessage", () => {
  it("shows the message with its backticked names as code, never a literal backtick", () => {
    render(
      <ErrorMessage error={new KilnError("MODULE_NOT_FOUND", "`@shop/wishlist` is not a module of this session")} />,
    );
    const message = screen.getByTestId("error").querySelector(".error-message")!;
    expect(message.textContent).toBe("@shop/wishlist is not a module of this session");
    expect(message.querySelector("code")).toHaveTextContent("@shop/wishlist");
  });

  it("keeps the code behind a closed details toggle, with its words", () => {
    render(<ErrorMessage error={new KilnError("DRIVER_NOT_FOUND", "claude is not installed")} />);
    const details = screen.getByTestId("error-details") as HTMLDetailsElement;
    expect(details.tagName).toBe("DETAILS");
    expect(details.open).toBe(false);
    expect(details).toHaveTextContent("DRIVER_NOT_FOUND");
    expect(details).toHaveTextContent("The agent's program is not installed or not found");
  });

  it("says the code in words when the message is empty", () => {
    render(<ErrorMessage error={new KilnError("RATE_LIMITED", "")} />);
    expect(screen.getByTestId("error").querySelector(".error-message")).toHaveTextContent("Too many requests at once");
  });
});

// Tests for the session header's Eject and nothing-changed badge: primary only when something can be delivered, and "No changes yet" instead of a ready look.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { makeSession, makeTotals } from "../../test/fixtures";
import { EjectButton } from "./EjectButton";
import { NothingChanged } from "./NothingChanged";

describe("EjectButton", () => {
  it("is the primary button only when files changed and nothing is in the way", () => {
    const { rerender } = render(<EjectButton session={makeSession({ state: "review", changed: true })} />);
    expect(screen.getByTestId("eject")).toHaveClass("btn-primary");
    expect(screen.getByTestId("eject")).toHaveAttribute("href", "#/session/s1/deliver");
    for (const state of ["planning", "blocked", "awaiting-approval"] as const) {
      rerender(<EjectButton session={makeSession({ state, changed: true })} />);
      expect(screen.getByTestId("eject"), state).not.toHaveClass("btn-primary");
    }
    rerender(<EjectButton session={makeSession({ state: "review", changed: false })} />);
    expect(screen.getByTestId("eject")).not.toHaveClass("btn-primary");
    expect(screen.getByTestId("eject")).toHaveAttribute("title", "No changes yet: nothing to deliver");
    rerender(<EjectButton session={makeSession({ state: "editing", changed: true, running: true })} />);
    expect(screen.getByTestId("eject")).not.toHaveClass("btn-primary");
  });
});

describe("NothingChanged", () => {
  it("says no changes yet, then that the turns changed nothing, and nothing once files changed", () => {
    const { rerender, container } = render(
      <NothingChanged session={makeSession({ state: "editing", changed: false })} />,
    );
    expect(screen.getByTestId("nothing-changed")).toHaveTextContent("No changes yet");
    rerender(
      <NothingChanged
        session={makeSession({
          state: "review",
          changed: false,
          usage: { total: makeTotals({ turns: 3 }), byRole: [] },
        })}
      />,
    );
    expect(screen.getByTestId("nothing-changed")).toHaveTextContent("The agent's turns changed no files");
    rerender(<NothingChanged session={makeSession({ state: "review", changed: true })} />);
    expect(container).toBeEmptyDOMElement();
  });
});

// Tests for the delivery plan's module cards: a session module, the repository root's files (direct workflow) and a changed module not in the session.
import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DeliveryPlan } from "../../api/types";
import { DeliveryPlanView } from "./DeliveryPlanView";

const plan: DeliveryPlan = {
  sessionId: "s1",
  target: "git-pr",
  availableTargets: [{ target: "git-pr", available: true, reason: null }],
  modules: [
    {
      moduleId: "@mono/a",
      directory: "packages/a",
      group: "module",
      kind: "edit",
      added: [],
      overwritten: ["packages/a/src/x.js"],
      deleted: [],
      newPackages: [],
      enable: false,
    },
    {
      moduleId: "@mono/b",
      directory: "packages/b",
      group: "other-module",
      kind: "edit",
      added: [],
      overwritten: ["packages/b/src/y.js"],
      deleted: [],
      newPackages: [],
      enable: false,
    },
    {
      moduleId: "(repository)",
      directory: "",
      group: "outside",
      kind: "edit",
      added: [".github/workflows/ci.yml"],
      overwritten: ["pnpm-lock.yaml"],
      deleted: [],
      newPackages: [],
      enable: false,
    },
  ],
  gates: ["module-schema", "tests (@mono/a)", "lint (@mono/a): not configured"],
  steps: ["Run every gate"],
  restartNeeded: false,
  blockers: [],
  branch: "kiln/a-12345678",
  planId: "p1",
};

describe("DeliveryPlanView", () => {
  it("names the repository root's group and marks a module not in the session", () => {
    render(<DeliveryPlanView plan={plan} />);
    const cards = screen.getAllByTestId("plan-module");
    expect(cards.map((c) => c.getAttribute("data-group"))).toEqual(["module", "other-module", "outside"]);
    expect(within(cards[0]).getByTestId("plan-module-label")).toHaveTextContent("@mono/a");
    expect(within(cards[0]).queryByTestId("plan-not-in-session")).toBeNull();
    expect(within(cards[1]).getByTestId("plan-not-in-session")).toHaveTextContent("not in the session");
    expect(within(cards[2]).getByTestId("plan-module-label")).toHaveTextContent(
      "Repository root (outside every module)",
    );
    expect(within(cards[2]).getByTestId("plan-overwritten")).toHaveTextContent("pnpm-lock.yaml");
    expect(within(cards[2]).getByTestId("plan-added")).toHaveTextContent(".github/workflows/ci.yml");
    expect(screen.getByTestId("plan-gates")).toHaveTextContent("lint (@mono/a): not configured");
  });
});

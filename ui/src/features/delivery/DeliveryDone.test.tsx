// Tests for the done screen: what happens next per target (uncommitted files in the workspace; the branch and pull request link).
import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DeliveryRun } from "../../api/types";
import { DeliveryDone, nextStepText } from "./DeliveryDone";

function run(overrides: Partial<DeliveryRun> = {}): DeliveryRun {
  return {
    id: "r1",
    sessionId: "s1",
    target: "workspace",
    state: "delivered",
    steps: [],
    startedAt: "2025-01-01T12:00:00Z",
    endedAt: "2025-01-01T12:01:00Z",
    pullRequest: null,
    landed: ["modules/cart/src/a.ts", "modules/cart/src/b.ts", "modules/cart/SPEC.md"],
    error: null,
    ...overrides,
  };
}

describe("DeliveryDone", () => {
  it("says the workspace's files sit uncommitted, how many, and how to look at them", () => {
    render(<DeliveryDone run={run()} />);
    const next = screen.getByTestId("done-next");
    expect(next).toHaveAttribute("data-target", "workspace");
    expect(next).toHaveTextContent(
      "3 files now sit in your workspace, not committed. Nothing was committed or pushed.",
    );
    expect(next).toHaveTextContent("Review them with git status and git diff, then commit them yourself.");
    expect(within(screen.getByTestId("landed")).getAllByRole("listitem")).toHaveLength(3);
    expect(screen.queryByTestId("pr-link")).not.toBeInTheDocument();
  });

  it("leaves git out of a workspace that is not a repository", () => {
    render(<DeliveryDone run={run()} isGit={false} />);
    const next = screen.getByTestId("done-next");
    expect(next).toHaveTextContent("3 files now sit in your workspace, not committed.");
    expect(next).toHaveTextContent("The workspace is not a git repository: review them in your editor");
    expect(next).not.toHaveTextContent("git status");
  });

  it("counts one file in the singular, and says so when none was written", () => {
    expect(nextStepText(run({ landed: ["a.ts"] }))).toMatch(/^1 file now sit/);
    render(<DeliveryDone run={run({ landed: [] })} />);
    expect(screen.getByTestId("done-next")).toHaveTextContent("No file was written to the workspace.");
  });

  it("names the branch and links the pull request for git-pr", () => {
    const pr = {
      url: "https://github.com/acme/shop/pull/7",
      number: 7,
      branch: "kiln/coupons",
      via: "api",
      created: true,
    };
    render(<DeliveryDone run={run({ target: "git-pr", pullRequest: pr, landed: ["a.ts", "b.ts"] })} />);
    const next = screen.getByTestId("done-next");
    expect(next).toHaveAttribute("data-target", "git-pr");
    expect(next).toHaveTextContent(
      "2 files pushed to branch kiln/coupons; the pull request is open for review. Your workspace is unchanged.",
    );
    expect(screen.getByTestId("pr-link")).toHaveAttribute("href", pr.url);
    expect(screen.getByTestId("pr-link")).toHaveTextContent("Open pull request #7");
    expect(screen.getByTestId("pr-branch")).toHaveTextContent("kiln/coupons");
  });

  it("says a compare link opened no pull request yet, and an update updated one", () => {
    const pr = {
      url: "https://github.com/acme/shop/compare/main...kiln/x",
      number: null,
      branch: "kiln/x",
      via: "compare",
      created: true,
    };
    expect(nextStepText(run({ target: "git-pr", pullRequest: pr }))).toContain(
      "No pull request was opened: open the compare link to create it.",
    );
    expect(
      nextStepText(run({ target: "git-pr", pullRequest: { ...pr, via: "api", number: 3, created: false } })),
    ).toContain("the open pull request was updated");
  });
});
